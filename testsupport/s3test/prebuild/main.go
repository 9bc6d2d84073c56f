// Command prebuild builds the S3 server the tests run (testsupport/s3test)
// into the user's cache directory, so the first test run does not wait for
// it. scripts/services.sh runs it.
package main

import (
	"fmt"
	"os"

	"github.com/oncehq/once/testsupport/s3test"
)

func main() {
	bin, err := s3test.EnsureBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
