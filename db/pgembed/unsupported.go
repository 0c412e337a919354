//go:build !linux

// Package pgembed runs a private PostgreSQL server as a child process. It is
// implemented for Linux only (it relies on Pdeathsig and /proc); elsewhere
// Start fails and DATABASE_URL must point at a server.
package pgembed

import (
	"context"
	"errors"
)

// Options configure Start.
type Options struct {
	DataDir string
	Logf    func(format string, args ...any)
	Fast    bool
}

// Server is a running PostgreSQL child process (Linux only).
type Server struct{}

var errUnsupported = errors.New("the embedded PostgreSQL server is supported on Linux only: set DATABASE_URL")

// FindBinDir fails: the embedded server is Linux-only.
func FindBinDir() (string, error) { return "", errUnsupported }

// Start fails: the embedded server is Linux-only.
func Start(ctx context.Context, o Options) (*Server, error) { return nil, errUnsupported }

// URL returns "".
func (s *Server) URL(dbname string) string { return "" }

// Port returns 0.
func (s *Server) Port() int { return 0 }

// Pid returns 0.
func (s *Server) Pid() int { return 0 }

// LogPath returns "".
func (s *Server) LogPath() string { return "" }

// Done returns a closed channel.
func (s *Server) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Stop does nothing.
func (s *Server) Stop() error { return nil }
