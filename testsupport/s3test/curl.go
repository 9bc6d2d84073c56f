package s3test

import (
	"bytes"
	"os/exec"
	"testing"
)

// Curl sends data to a pre-signed URL with curl, as a client would, with
// the headers exactly as given, and returns the HTTP status ("200").
func Curl(t testing.TB, method, url string, headers map[string]string, data []byte) string {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("s3test: curl plays the client: %v", err)
	}
	args := []string{"-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", method, "--data-binary", "@-"}
	for k, v := range headers {
		args = append(args, "-H", k+": "+v)
	}
	cmd := exec.Command(curl, append(args, url)...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("s3test: curl: %v", err)
	}
	return string(out)
}
