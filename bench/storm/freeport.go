package storm

import "net"

// freePort asks the kernel for a free loopback port. Whoever is given it
// listens a moment later; another process taking it in between is possible
// and makes that start fail loudly, never silently share.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
