package boot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// lan is one deployment's network: a bridge in a namespace of its own,
// with a veth to each machine's namespace. Nothing routes out of it: no
// namespace has a default route or a link to this machine's own network.
type lan struct {
	t      *testing.T
	id     string // short and unique, for names of at most 15 bytes
	bridge string // the namespace holding the bridge
	hosts  int
}

// subnetBits is the prefix length every machine's address gets: wide
// enough for the examples' 10.20.0.0/16 cluster and the client.
const subnetBits = 16

func newLAN(t *testing.T, name string) *lan {
	t.Helper()
	sum := sha256.Sum256([]byte(t.Name() + "/" + name))
	l := &lan{t: t, id: hex.EncodeToString(sum[:])[:6]}
	l.bridge = "ob" + l.id + "-sw"
	// A run that was killed leaves its namespaces behind.
	_ = exec.Command("ip", "netns", "delete", l.bridge).Run()
	l.ip("netns", "add", l.bridge)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", l.bridge).Run() })
	l.ip("-n", l.bridge, "link", "add", "br0", "type", "bridge")
	l.ip("-n", l.bridge, "link", "set", "br0", "up")
	return l
}

// host makes a namespace with a loopback and one interface, eth0, at
// address on the bridge, and returns its /run/netns path.
func (l *lan) host(address string) string {
	l.t.Helper()
	l.hosts++
	ns := fmt.Sprintf("ob%s-h%d", l.id, l.hosts)
	port := fmt.Sprintf("ob%sp%d", l.id, l.hosts)
	_ = exec.Command("ip", "netns", "delete", ns).Run()
	l.ip("netns", "add", ns)
	l.t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", ns).Run() })
	l.ip("-n", ns, "link", "set", "lo", "up")
	l.ip("-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", port, "netns", l.bridge)
	l.ip("-n", l.bridge, "link", "set", port, "master", "br0", "up")
	l.ip("-n", ns, "addr", "add", fmt.Sprintf("%s/%d", address, subnetBits), "dev", "eth0")
	l.ip("-n", ns, "link", "set", "eth0", "up")
	return "/run/netns/" + ns
}

func (l *lan) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// inNamespace runs a command of this machine in a namespace's network
// alone: the client that reaches the machines from the LAN.
func inNamespace(netns string, args ...string) (string, error) {
	ns := strings.TrimPrefix(netns, "/run/netns/")
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}
