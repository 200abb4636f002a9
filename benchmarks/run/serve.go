package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// server is a `ttsgen serve` that the suite started for runs that drive a server (run.Serve): consecutive runs
// with the same serve arguments share it, so a sweep of rates measures one warm server, as a deployment would be.
type server struct {
	args []string
	url  string
	cmd  *exec.Cmd
	exit chan error
	log  strings.Builder // what it printed: read only once it has exited
}

// servers holds the one server running at a time.
type servers struct {
	bin     string
	current *server
}

// startTimeout bounds how long a server may take to load its voices and answer /health.
const startTimeout = 120 * time.Second

// get returns a ready server for args, reusing the running one when its arguments are the same.
func (s *servers) get(ctx context.Context, args []string) (*server, error) {
	if s.current != nil && slices.Equal(s.current.args, args) {
		how, exited := s.current.exitedWith()
		if !exited {
			return s.current, nil
		}
		s.current = nil
		return nil, fmt.Errorf("the server of the previous run exited: %s", how)
	}
	s.stop()
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	srv := &server{args: args, url: "http://" + addr, exit: make(chan error, 1)}
	srv.cmd = exec.Command(s.bin, append([]string{"serve", "--addr", addr}, args...)...)
	srv.cmd.Stdout, srv.cmd.Stderr = &srv.log, &srv.log
	if err := srv.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s serve: %w", s.bin, err)
	}
	go func() { srv.exit <- srv.cmd.Wait() }()
	if err := srv.waitReady(ctx); err != nil {
		_ = srv.cmd.Process.Kill()
		<-srv.exit
		return nil, fmt.Errorf("%w\n%s", err, tail([]byte(srv.log.String()), 1500))
	}
	s.current = srv
	return srv, nil
}

// exitedWith says, when srv has exited, how (its error and the end of what it printed).
func (srv *server) exitedWith() (string, bool) {
	select {
	case err := <-srv.exit:
		srv.exit <- err // for get, which checks again
		return fmt.Sprintf("%v\n%s", err, tail([]byte(srv.log.String()), 1500)), true
	default:
		return "", false
	}
}

// stop ends the running server the way an operator would (SIGTERM: it drains), killing it if it does not exit.
func (s *servers) stop() {
	srv := s.current
	if srv == nil {
		return
	}
	s.current = nil
	_ = srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.exit:
	case <-time.After(30 * time.Second):
		_ = srv.cmd.Process.Kill()
		<-srv.exit
	}
}

// waitReady polls GET /health until it answers 200 (the engine is loaded), the server exits, or startTimeout.
func (srv *server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/health", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-srv.exit:
			srv.exit <- err
			return fmt.Errorf("ttsgen serve exited before it was ready: %v", err)
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("ttsgen serve at %s was not ready after %s", srv.url, startTimeout)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
