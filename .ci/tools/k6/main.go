// Command k6 is k6 with Gatehouse's extensions compiled in (what xk6 generates, kept in the repo so
// the build works from the Go module proxy alone). To add an extension: require it in go.mod (with a
// replace for a local path) and blank-import it below.
package main

import (
	k6cmd "go.k6.io/k6/v2/cmd"

	_ "gatehouse.local/xk6-gatehouse"
)

func main() {
	k6cmd.Execute()
}
