// Command ctxaudit audits what AI agents' tool calls put into the model's
// context. See `ctxaudit --help` and README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctxaudit/ctxaudit/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
