package boot

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// accepted is a line the stand-in logs for each connection a listener
// takes: what, the local address and port, and the peer's address.
var acceptedLine = regexp.MustCompile(`accepted (.+) connection on (\S+):(\d+) from (\S+):\d+`)

type connection struct {
	what  string
	local string
	port  int
	peer  string
}

// connections are the connections the machine's stand-ins accepted.
func (m *bootedMachine) connections() []connection {
	var out []connection
	for _, p := range m.processes {
		for _, match := range acceptedLine.FindAllStringSubmatch(m.journal(p.unit), -1) {
			port, _ := strconv.Atoi(match[3])
			out = append(out, connection{what: match[1], local: match[2], port: port, peer: match[4]})
		}
	}
	return out
}

// checkFirewall holds the example's firewall rules to what other machines
// really reached: after the checks (the head's smoke request crosses every
// machine) and one request from a client on the LAN to each API, every
// connection a machine accepted from another address is on a port a rule
// of that machine opens, and every single-port rule opens a port some
// other machine or the client reached. A range (the head's ephemeral
// ports, where the real head binds a socket per stage and the stand-in
// binds none) is not judged.
func (b *booted) checkFirewall(t *testing.T) {
	t.Helper()
	for _, m := range b.machines {
		for _, p := range m.processes {
			if p.role != "head" {
				continue
			}
			url := fmt.Sprintf("http://%s:%d/v1/models", m.address, p.pipeline.APIPort)
			if out, err := inNamespace(b.client, "/usr/bin/python3", "-c",
				"import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10)", url); err != nil {
				t.Errorf("a client on the LAN cannot reach %s: %v\n%s", url, err, out)
			}
		}
	}
	for _, m := range b.machines {
		var rules []firewallRule
		for _, r := range b.d.rules {
			if r.target == m.planned.id {
				rules = append(rules, r)
			}
		}
		reached := map[int]bool{}
		for _, c := range m.connections() {
			if c.peer == m.address || c.peer == "127.0.0.1" || c.peer == "::1" {
				continue
			}
			reached[c.port] = true
			if !opens(rules, c.port) {
				t.Errorf("%s reached the %s on %s:%d of %s, which no firewall rule of %s opens", c.peer, c.what, c.local, c.port, m.name, m.planned.address)
			}
		}
		for _, r := range rules {
			if r.from == r.to && !reached[r.from] {
				t.Errorf("%s opens port %d of %s, which nothing on another machine reached", r.address, r.from, m.planned.address)
			}
		}
	}
}

func opens(rules []firewallRule, port int) bool {
	for _, r := range rules {
		if r.from <= port && port <= r.to {
			return true
		}
	}
	return false
}
