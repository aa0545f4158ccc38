package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// mainEnv makes the test binary behave as the spate binary, so that
// commands that re-execute themselves (bench io runs every round in a child
// process via os.Executable) work under `go test`.
const mainEnv = "SPATE_CLI_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		// As cmd/spate does: SIGINT and SIGTERM cancel the context.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
