package benchhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spate-io/spate/internal/server"
)

// ServerSpec says which server a child runs.
type ServerSpec struct {
	Suite   string `json:"suite"`
	Variant string `json:"variant"`
	Dir     string `json:"dir,omitempty"` // the files, for the downloads suite
}

// ServerReady is the one JSON line a child prints once it listens.
type ServerReady struct {
	Addr   string `json:"addr"`
	Prefix string `json:"prefix"` // prepended to request paths: "/" or "/files/"
}

// RunServer is the child side of Run: it serves spec's variant on a free
// loopback port, prints a ServerReady line to out, and serves until stdin
// reaches its end (the parent closes it, or exits).
func RunServer(ctx context.Context, spec ServerSpec, stdin io.Reader, out io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("cannot listen: %w", err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, stdin)
		cancel()
	}()
	ready := ServerReady{Addr: ln.Addr().String(), Prefix: "/"}
	var h http.Handler
	switch {
	case spec.Suite == SuiteResponses:
		h = responseHandler(spec.Variant)
	case spec.Suite == SuiteDownloads && spec.Variant == "spate":
		// The whole `spate serve --files DIR` stack on this listener.
		s, err := server.New(server.Config{FilesDir: spec.Dir, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			return err
		}
		defer s.Close()
		ready.Prefix = "/files/"
		if err := announce(out, ready); err != nil {
			return err
		}
		return s.Serve(ctx, ln, nil)
	case spec.Suite == SuiteDownloads:
		root, err := os.OpenRoot(spec.Dir)
		if err != nil {
			return fmt.Errorf("cannot open the files directory: %w", err)
		}
		defer root.Close()
		h = downloadHandler(spec.Variant, root)
	}
	if h == nil {
		return fmt.Errorf("no server %q in suite %q", spec.Variant, spec.Suite)
	}
	if err := announce(out, ready); err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

func announce(out io.Writer, r ServerReady) error {
	b, _ := json.Marshal(r)
	_, err := fmt.Fprintf(out, "%s\n", b)
	return err
}
