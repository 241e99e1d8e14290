package harnesslab

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// webServer is a loopback HTTPS server whose certificate is signed by a CA
// made for this run; the harness trusts it through NODE_EXTRA_CA_CERTS.
type webServer struct {
	URL    string // https://localhost:PORT
	CAFile string
	srv    *http.Server
}

func startWeb(ctx context.Context, dir string, pages map[string]string) (*webServer, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ctxaudit lab CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "lab-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return nil, err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for p, body := range pages {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			ct := "text/html; charset=utf-8"
			if strings.HasSuffix(r.URL.Path, ".txt") {
				ct = "text/plain; charset=utf-8"
			}
			w.Header().Set("Content-Type", ct)
			_, _ = io.WriteString(w, body)
		})
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{{
		Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey,
	}}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return &webServer{URL: fmt.Sprintf("https://127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port), CAFile: caFile, srv: srv}, nil
}

// otlpCapture is a loopback OTLP/HTTP receiver that appends every request
// body (OTLP JSON) as one line of a file, for replay through the collector.
type otlpCapture struct {
	URL  string
	File string
	srv  *http.Server
	mu   sync.Mutex
}

func startOTLP(ctx context.Context, file string) (*otlpCapture, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &otlpCapture{URL: "http://" + ln.Addr().String(), File: file}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/logs", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || !json.Valid(b) {
			http.Error(w, "want OTLP JSON", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			var compact = make([]byte, 0, len(b))
			if cb, cerr := compactJSON(b); cerr == nil {
				compact = cb
			}
			_, _ = f.Write(append(compact, '\n'))
			_ = f.Close()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	})
	c.srv = &http.Server{Handler: mux}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

func compactJSON(b []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// MCP tools the lab's stdio server offers.
const (
	// MCPDump returns Lines(n) of tag "mcp".
	MCPDump = "lab_dump"
)

// ServeMCP is the lab's stdio MCP server (JSON-RPC 2.0, one message a
// line): tool lab_dump {n} returns n generated lines, so the lab knows the
// exact original of an MCP result.
func ServeMCP(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification, or not JSON-RPC
		}
		var result any
		switch req.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(req.Params, &p)
			if p.ProtocolVersion == "" {
				p.ProtocolVersion = "2025-06-18"
			}
			result = map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "ctxaudit-lab", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name": MCPDump, "description": "Return n generated lines.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []string{"n"}},
			}}}
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					N int `json:"n"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(req.Params, &p)
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": Lines("mcp", p.Arguments.N, 60)}}}
		case "ping":
			result = map[string]any{}
		default:
			if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}}); err != nil {
				return err
			}
			continue
		}
		if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}); err != nil {
			return err
		}
	}
	return sc.Err()
}

func (env *RunEnv) mcpServer() map[string]any {
	return map[string]any{"type": "stdio", "command": env.self, "args": []string{"mcp-server"}}
}
