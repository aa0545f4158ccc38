package cli

import (
	"os"
	"testing"
)

// mainEnv makes the test binary behave as the spate binary, so that
// commands that re-execute themselves (bench io runs every round in a child
// process via os.Executable) work under `go test`.
const mainEnv = "SPATE_CLI_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(os.Args[1:])) // as cmd/spate does
	}
	os.Exit(m.Run())
}
