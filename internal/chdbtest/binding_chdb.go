//go:build chdb

package chdbtest

import "github.com/chdb-io/chdb-go/chdb"

func init() { opener = openSession }

type session struct{ s *chdb.Session }

func openSession(dir string) (querier, error) {
	s, err := chdb.NewSession(dir)
	if err != nil {
		return nil, err
	}
	return session{s}, nil
}

func (s session) Query(sql, format string) ([]byte, error) {
	r, err := s.s.Query(sql, format)
	if err != nil {
		return nil, err
	}
	defer r.Free()
	if err := r.Error(); err != nil {
		return nil, err
	}
	return append([]byte(nil), r.Buf()...), nil
}

func (s session) Close() { s.s.Close() }
