package pipeline

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// Port names, as reported for firewall rules and kept stable by name.
const (
	portAPI         = "api"
	portOmniMaster  = "omni_master"
	suffixBootstrap = "_bootstrap"
	suffixSide      = "_side_channel"
)

// portTable tracks which ports are taken on each host. Ports are unique per
// host, not globally: two machines may both listen on 25201.
type portTable struct {
	used     map[string]map[int]string // host -> port -> name
	reserved map[int]bool
	// avoid and avoidAll are ports a config names that may be taken on a
	// host, or on any (foreignPorts), by what names them: the allocator
	// never hands them out there, and a port given there is refused.
	avoid    map[string]map[int]string
	avoidAll map[int]string
	first    int
	last     int
}

func newPortTable(spec Spec) *portTable {
	t := &portTable{used: map[string]map[int]string{}, reserved: map[int]bool{}, avoid: map[string]map[int]string{}, avoidAll: map[int]string{},
		first: DefaultPortRangeFirst, last: DefaultPortRangeLast}
	if spec.PortRange != nil {
		t.first, t.last = spec.PortRange.First, spec.PortRange.Last
	}
	for _, r := range spec.ReservedPorts {
		t.reserved[r] = true
	}
	return t
}

func (t *portTable) owner(host string, port int) (string, bool) {
	name, ok := t.used[host][port]
	return name, ok
}

func (t *portTable) mark(host string, port int, name string) {
	if t.used[host] == nil {
		t.used[host] = map[int]string{}
	}
	t.used[host][port] = name
}

func (t *portTable) avoidOn(host string, port int, what string) {
	if t.avoid[host] == nil {
		t.avoid[host] = map[int]string{}
	}
	if t.avoid[host][port] == "" {
		t.avoid[host][port] = what
	}
}

// avoided names what a config says of a port on host, "" for nothing.
func (t *portTable) avoided(host string, port int) string {
	if what := t.avoid[host][port]; what != "" {
		return what
	}
	return t.avoidAll[port]
}

func (t *portTable) free(host string, port int) bool {
	_, taken := t.owner(host, port)
	return !taken && !t.reserved[port] && t.avoided(host, port) == "" && port != connectorZMQBasePort && port >= 1 && port <= 65535
}

// fits reports whether n consecutive ports from start are in the range and
// free on host.
func (t *portTable) fits(host string, n, start int) bool {
	if start < t.first || start+n-1 > t.last {
		return false
	}
	for p := start; p < start+n; p++ {
		if !t.free(host, p) {
			return false
		}
	}
	return true
}

// block finds n consecutive free ports in the range, lowest first.
func (t *portTable) block(host string, n int) (int, bool) {
	for start := t.first; start+n-1 <= t.last; start++ {
		if t.fits(host, n, start) {
			return start, true
		}
	}
	return 0, false
}

// portRequest is one named port (or block of ports) the plan needs.
type portRequest struct {
	name  string
	host  string
	stage *plannedStage // nil for the API and master ports
	count int           // ports in the block: one per data-parallel rank for NIXL
	given *int
	path  Path
	out   *int
	index string         // how a block's ports are named (portName)
	done  func(port int) // records the port where the plan needs it
	// external is a port something else listens on (the user's proxy, a
	// base config's own settings): in the ledger of its host, never
	// listed in the plan's ports.
	external bool
}

// portPlan is every port the plan listens on, and the ones other steps
// write into the config or the launch by role.
type portPlan struct {
	list   []Port // in request order
	api    int
	master int // the omni master's, across hosts only
	// head are the ports connector entries ask for on the head
	// (kvconnector.Entry.HeadPorts: LMCache's PD proxy), by name.
	head map[string]int
	// edges are the ports of the connectors that carry an edge across
	// hosts, on the sending host.
	edges map[Edge]int
	// sides are each side of the PD pair's connector ports by suffix
	// (_bootstrap, _side_channel, ...), by the side's key; handshake is
	// the one its peer dials, if any (assemble puts both on the stage).
	sides     map[string]map[string]int
	handshake map[string]int
	// problems are what the allocation could not do (a port given twice
	// on a host, a range with no room, a port in the config that is no
	// port, a proxy address the connector cannot reach), in the order it
	// met them; checkPorts reports them.
	problems Diagnostics
}

// allocatePorts claims every port the inputs give, then hands out the
// rest from port_range, preferring the ports an earlier plan chose: the
// ports the layout's stages, its head and the connector conn need, beside
// those the base writes (foreignPorts). handoff is the release's handoff
// gate, which says which port a side's bootstrap_port is (handshakePort);
// stageBased asks for the omni master's. It reports nothing: what it
// cannot do is in the plan's problems, for checkPorts.
func allocatePorts(spec Spec, base baseConfig, lay stageLayout, conn connector, handoff releases.HandoffGate, stageBased bool) portPlan {
	pp := portPlan{edges: map[Edge]int{}, sides: map[string]map[string]int{}, handshake: map[string]int{}, head: map[string]int{}}
	t := newPortTable(spec)
	head := lay.head()
	reqs := []*portRequest{{name: portAPI, host: head, count: 1, given: spec.APIPort, path: AttrPath("api_port"), out: &pp.api}}
	if spec.APIPort == nil {
		api := DefaultAPIPort
		reqs[0].given = &api
	}
	// The PD pair's ports come first, so that prefill's and decode's are
	// the first two of the range whatever else the launch needs.
	pre, dec := lay.pdPair()
	for _, s := range []*plannedStage{pre, dec} {
		reqs = append(reqs, sidePortRequests(s, conn, handoff, &pp)...)
	}
	if stageBased {
		reqs = append(reqs, &portRequest{name: portOmniMaster, host: head, count: 1, out: &pp.master})
	}
	for _, e := range conn.entries() {
		for _, name := range e.HeadPorts {
			reqs = append(reqs, &portRequest{name: name, host: head, count: 1, out: new(int), done: func(port int) { pp.head[name] = port }})
		}
	}
	reqs = append(reqs, edgePortRequests(lay, pp.edges)...)
	ds := &pp.problems
	reqs = append(reqs, foreignPorts(ds, t, base, lay, conn.proxy)...)
	for _, r := range reqs {
		if r.given != nil {
			claim(ds, t, r)
		}
	}
	// The ports an earlier plan chose are kept first, each while it still
	// fits, so that a port which lost its own cannot take another's; the
	// rest come from the lowest free ports after them.
	for _, r := range reqs {
		if r.given == nil {
			keepPrevious(t, spec.Previous, head, r)
		}
	}
	for _, r := range reqs {
		if r.given == nil && *r.out == 0 {
			allocate(ds, t, r)
		}
	}
	pp.list = listPorts(reqs)
	return pp
}

// listPorts lists the ports the requests were given, in request order,
// recording each where the plan needs it; the ports of something else
// (external) are left out.
func listPorts(reqs []*portRequest) []Port {
	var list []Port
	for _, r := range reqs {
		if *r.out == 0 || r.external {
			continue
		}
		var stageID *int
		if r.stage != nil {
			id := r.stage.id
			stageID = &id
		}
		if r.done != nil {
			r.done(*r.out)
		}
		for i := 0; i < r.count; i++ {
			name := portName(r.name, i, r.count, r.index)
			list = append(list, Port{Name: name, Port: *r.out + i, StageID: stageID, Host: r.host})
		}
	}
	return list
}

// edgePortRequests asks, for every edge between two hosts, for the port
// its connector's sender listens on (zmq_port of
// MooncakeTransferEngineConnector, on the sending host), recorded in into.
func edgePortRequests(lay stageLayout, into map[Edge]int) []*portRequest {
	var reqs []*portRequest
	for _, e := range lay.crossHostEdges() {
		src := lay.stageByID(e.From)
		reqs = append(reqs, &portRequest{name: edgePortName(e), host: src.host, stage: src, count: 1, out: new(int),
			done: func(port int) { into[e] = port }})
	}
	return reqs
}

func edgePortName(e Edge) string { return fmt.Sprintf("edge_%d_%d", e.From, e.To) }

// checkSides asks each connector class the pair loads whether it can run
// its sides (kvconnector.Entry.CheckSide: NIXL refuses replicas). Both
// sides are copies of the base's split stage and share what such a check
// reads, so one error per class says it, at the base config.
func checkSides(conn connector, basePath Path, ds *Diagnostics, sides ...*plannedStage) {
	for _, e := range conn.entries() {
		if e.CheckSide == nil {
			continue
		}
		for _, s := range sides {
			if f := e.CheckSide(sideOf(s)); f != nil {
				ds.errorf(f.Code, basePath, f.Summary, "%s", f.Detail)
				break
			}
		}
	}
}

// sidePortRequests asks for the ports one side of the PD pair listens on
// over conn, recording them in pp. The side's bootstrap_port, when set,
// gives the port its peer dials for the KV handoff (handshakePort).
func sidePortRequests(s *plannedStage, conn connector, handoff releases.HandoffGate, pp *portPlan) []*portRequest {
	ports := map[string]int{}
	pp.sides[s.key] = ports
	given := s.bootstrapPort()
	sps := conn.sidePorts(s)
	hs := handshakePort(sps, handoff)
	reqs := make([]*portRequest, 0, len(sps))
	for i, sp := range sps {
		r := &portRequest{name: s.key + sp.Suffix, host: s.host, stage: s, count: sp.Count, index: sp.Index, out: new(int)}
		isHandshake := i == hs
		if isHandshake {
			r.given, r.path = given, s.path.Attr("bootstrap_port")
		}
		suffix := sp.Suffix
		r.done = func(port int) {
			ports[suffix] = port
			if isHandshake {
				pp.handshake[s.key] = port
			}
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// bootstrapPort is the bootstrap_port given for a side of the PD pair, nil
// when unset or off the pair.
func (s *plannedStage) bootstrapPort() *int {
	if s.pd == nil {
		return nil
	}
	return s.pd.BootstrapPort
}

// checkPorts reports what the ports of the plan cannot be: a side of the
// layout's pair its connector cannot run (checkSides), a bootstrap_port on
// a side that listens on no port, then what allocatePorts could not do
// (its problems, proxy addresses included), in the order it met it.
func checkPorts(lay stageLayout, conn connector, handoff releases.HandoffGate, basePath Path, pp portPlan, ds *Diagnostics) {
	pre, dec := lay.pdPair()
	checkSides(conn, basePath, ds, pre, dec)
	for _, s := range []*plannedStage{pre, dec} {
		if s.bootstrapPort() != nil && handshakePort(conn.sidePorts(s), handoff) < 0 {
			ds.errorf(diagcode.BootstrapPortUnused, s.path.Attr("bootstrap_port"), "this side of the connector listens on no port",
				"the %s side of %s dials its peer and listens on nothing; remove %s.bootstrap_port.", s.key, conn.name(), s.key)
		}
	}
	*ds = append(*ds, pp.problems...)
}

func claim(ds *Diagnostics, t *portTable, r *portRequest) {
	ok := true
	for port := *r.given; port < *r.given+r.count; port++ {
		switch owner, taken := t.owner(r.host, port); {
		case taken:
			ds.errorf(diagcode.PortCollision, r.path, "a port is used twice on one host",
				"port %d is both %s and %s%s; choose another port.", port, owner, r.name, onHost(r.host))
			ok = false
		case t.avoided(r.host, port) != "" && !r.external:
			ds.errorf(diagcode.PortCollision, r.path, "a port is used twice on one host",
				"port %d is %s, and %s would listen on it%s; choose another port.", port, t.avoided(r.host, port), r.name, onHost(r.host))
			ok = false
		case t.reserved[port] && !r.external:
			ds.errorf(diagcode.PortReserved, r.path, "the port is in reserved_ports",
				"%s would listen on %d, which reserved_ports keeps free; choose another port or unreserve it.", r.name, port)
			ok = false
		case port == connectorZMQBasePort:
			ds.errorf(diagcode.PortCollision, r.path, "the port is the connectors' ZMQ base port",
				"%s would listen on %d, where vllm-omni's connectors (and Mooncake's master) listen by default; choose another port.", r.name, port)
			ok = false
		}
		t.mark(r.host, port, r.name)
	}
	if ok {
		*r.out = *r.given
	}
}

// keepPrevious gives a request the block an earlier plan prev chose for
// it, when the whole block is still free; head is the new plan's head.
func keepPrevious(t *portTable, prev *Allocations, head string, r *portRequest) {
	prefer := previousPort(prev, head, r)
	if prefer == 0 || !t.fits(r.host, r.count, prefer) {
		return
	}
	for port := prefer; port < prefer+r.count; port++ {
		t.mark(r.host, port, r.name)
	}
	*r.out = prefer
}

// previousPort is the first port an earlier plan chose for a request on
// the same host, 0 for none. A NIXL block is found under its name before
// one port per data-parallel rank replaced one per tensor-parallel rank
// (<name>_rank0).
func previousPort(prev *Allocations, head string, r *portRequest) int {
	if prev == nil {
		return 0
	}
	host := prev.HostOf(r.host, head)
	if port := prev.Ports[HostKey{host, portName(r.name, 0, r.count, r.index)}]; port != 0 {
		return port
	}
	if r.index == indexDP {
		return prev.Ports[HostKey{host, r.name + "_rank0"}]
	}
	return 0
}

func allocate(ds *Diagnostics, t *portTable, r *portRequest) {
	start, ok := t.block(r.host, r.count)
	if !ok {
		ds.errorf(diagcode.PortRangeExhausted, AttrPath("port_range"), "port_range has no room for every port",
			"%s needs %d free port(s)%s between %d and %d, after reserved_ports and the ports already given; widen port_range.", r.name, r.count, onHost(r.host), t.first, t.last)
		return
	}
	for port := start; port < start+r.count; port++ {
		t.mark(r.host, port, r.name)
	}
	*r.out = start
}

func onHost(h string) string {
	if h == "" {
		return ""
	}
	return " on host " + h
}

// allocations reports the choices a resource keeps stable: the planned
// stages' devices, the ports and the release.
func allocations(planned stageLayout, ports []Port, release string) Allocations {
	a := Allocations{Ports: map[HostKey]int{}, Devices: map[HostKey][]int{}, Head: planned.head(), Release: release}
	for _, port := range ports {
		a.Ports[HostKey{port.Host, port.Name}] = port.Port
	}
	for _, s := range planned.stages {
		a.Devices[HostKey{s.host, s.deviceKey}] = s.devices
	}
	return a
}
