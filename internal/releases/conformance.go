package releases

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// Violation is one thing a release would refuse, or would start with PD
// off, in a deploy config and its launch lines.
type Violation struct {
	Rule   string        // stable name of the rule: Code without its release_ prefix
	Code   diagcode.Code // the rule's code, such as diagcode.ReleaseKVRole
	Detail string
}

func (v Violation) String() string { return v.Rule + ": " + v.Detail }

// Deployment is what machines run: the config and every process's argv.
type Deployment struct {
	Doc   *stageconfig.Document
	Argvs [][]string
	// Envs are the process environments of the launches, in Argvs' order;
	// nil when the launches are not known (a config checked alone).
	Envs []map[string]string
	// UserPipeline is true when the `pipeline:` key is registered by a
	// module the processes import before vllm-omni's CLI runs (the user's,
	// or the one the plan writes) rather than one the release has.
	UserPipeline bool
	// Planned says what the plan knows and a config alone does not: which
	// stages are the PD pair and where each stage runs. Nil for a config
	// checked on its own (validate_stage_config): then the pair is found as
	// the release finds it, hosts are read from VLLM_HOST_IP, and a config
	// without a PD pair is not judged as one.
	Planned *Planned
}

// Planned is the planner's knowledge of a deployment.
type Planned struct {
	Prefill, Decode int            // stage ids of the PD pair
	Hosts           map[int]string // stage id → host ("" on one host)
}

// crossHostConnectors are the omni transfer connectors that reach another
// host; SharedMemoryConnector, the one an edge gets when it names none
// (load_omni_transfer_config in
// vllm_omni/distributed/omni_connectors/utils/initialization.py@1ef338db),
// does not. Registered names: vllm_omni/distributed/omni_connectors/factory.py@2c250b81.
var crossHostConnectors = []string{
	"MooncakeTransferEngineConnector", "MooncakeStoreConnector", "MooncakeConnector", "MoriTransferEngineConnector", "YuanrongConnector",
}

// edgeTransports are the Python packages omni edge connectors import their
// transfer engine from: MooncakeTransferEngineConnector imports
// TransferEngine from mooncake.engine behind a guard, so a missing package
// fails only when the connector is built, not at import
// (vllm_omni/distributed/omni_connectors/connectors/mooncake_transfer_engine_connector.py@d4a869fe
// :25-28 and :100-102; the same at f92d84fc :26, :102).
var edgeTransports = map[string]string{
	"MooncakeTransferEngineConnector": "mooncake.engine",
}

// EdgeTransport is the Python module an omni edge connector class imports
// its transfer engine from, "" where none is known.
func EdgeTransport(class string) string { return edgeTransports[class] }

// CrossHostConnector is the omni connector the provider names on an edge
// between two hosts, as upstream's multi-node PD file does
// (vllm_omni/deploy/hunyuan_image_3_moe_pd.yaml@c9899cfe): it needs no
// service besides the two stages.
const CrossHostConnector = "MooncakeTransferEngineConnector"

// Conform checks a deployment against what release r reads, validates and
// accepts on its command line. It returns nil when r starts it with PD on.
func Conform(r Release, d Deployment) []Violation {
	c := &conformance{r: r, d: d}
	c.loader()
	if d.Doc.Dialect == StageArgs {
		c.stageArgsKeys()
	} else {
		c.deployKeys()
	}
	c.pdPair()
	c.connectorsLoadable()
	c.handoffGate()
	c.processors()
	c.crossHostEdges()
	c.envPorts()
	c.commandLines()
	c.stageEnv()
	return c.out
}

type conformance struct {
	r   Release
	d   Deployment
	out []Violation
}

func (c *conformance) add(code diagcode.Code, format string, args ...any) {
	c.out = append(c.out, Violation{Rule: strings.TrimPrefix(code.String(), "release_"), Code: code, Detail: fmt.Sprintf(format, args...)})
}

// loader: the file's dialect must be one r loads, through the flag every
// launch line uses.
func (c *conformance) loader() {
	dialect := string(c.d.Doc.Dialect)
	want := c.r.FlagFor(dialect)
	if want == "" {
		c.add(diagcode.ReleaseDialectUnreadable, "vllm-omni %s does not load a %s config", c.r.Version, dialect)
	}
	for i, argv := range c.d.Argvs {
		var flags []string
		for _, a := range argv {
			if a == FlagStageConfigsPath || a == FlagDeployConfig {
				flags = append(flags, a)
			}
		}
		switch {
		case len(flags) != 1:
			c.add(diagcode.ReleaseConfigFlag, "launch %d names the config with %d flags (%s); it needs exactly one", i, len(flags), strings.Join(flags, ", "))
		case want != "" && flags[0] != want:
			c.add(diagcode.ReleaseConfigFlag, "launch %d passes a %s config with %s; vllm-omni %s reads it only through %s", i, dialect, flags[0], c.r.Version, want)
		}
	}
}

// stageArgsKeys: what the stage_args runtime reads of each stage.
func (c *conformance) stageArgsKeys() {
	ids := map[int]bool{}
	for _, s := range c.d.Doc.Stages() {
		id, ok := s.ID()
		switch {
		case !ok:
			c.add(diagcode.ReleaseStageID, "%s has no integer stage_id", s.Describe())
		case ids[id]:
			c.add(diagcode.ReleaseStageID, "stage_id %d appears twice", id)
		default:
			ids[id] = true
		}
		if s.ModelStage() == "" {
			c.add(diagcode.ReleaseModelStage, "%s has no engine_args.model_stage", s.Describe())
		}
		if c.r.StageArgs == nil {
			continue // the release has no such runtime; loader() said so
		}
		for _, k := range c.r.RequiredStageKeys.Names {
			if !s.Sets(k) {
				c.add(diagcode.ReleaseStageKeyRequired, "%s has no %s, which vllm-omni %s's stage init reads with no default (%s)", s.Describe(), k, c.r.Version, c.r.RequiredStageKeys.Source)
			}
		}
		for _, k := range c.r.StageArgs.Ignored {
			if s.Sets(k.Key...) {
				c.add(diagcode.ReleaseIgnoredKey, "%s sets %s, which vllm-omni %s never reads; it reads %s", s.Describe(), strings.Join(k.Key, "."), c.r.Version, strings.Join(k.ReadAs, "."))
			}
		}
	}
}

// deployKeys: what the deploy loader needs of a stages file.
func (c *conformance) deployKeys() {
	key, _ := c.d.Doc.TopString("pipeline")
	switch {
	case key == "" && c.d.Planned == nil:
		// A config checked alone may be a plain pipeline: no PD to select.
	case key == "":
		c.add(diagcode.ReleasePipelineMissing, "a stages file turns PD on only through a registered pipeline named by pipeline:, and none is named")
	case !c.d.UserPipeline && !c.r.Registers(key):
		c.add(diagcode.ReleasePipelineUnregistered, "pipeline %q is not registered in vllm-omni %s: the deploy loader raises KeyError", key, c.r.Version)
	}
	if !c.d.Doc.HasTop("async_chunk") && c.r.Deploy != nil && c.r.Deploy.AsyncChunkDefault {
		c.add(diagcode.ReleaseAsyncChunkImplicit, "async_chunk is not written; vllm-omni %s's deploy loader then assumes true, which the sync input processors do not serve", c.r.Version)
	}
	if c.d.Doc.HasTop("stage_args") {
		c.add(diagcode.ReleaseStageArgsInStages, "a stages file also holds stage_args")
	}
}

// pdSide is one stage of the PD pair as the validator reads it.
type pdSide struct {
	stage stageconfig.Stage
	id    int
	kv    stageconfig.Settings // kv_transfer_config
}

func (s pdSide) kvString(key string) string {
	v, _ := s.kv.String(key)
	return v
}

// pdSides finds the PD pair: the planned one, or as the release finds it
// in a stage_args config (the stages' own flags). In a stages config alone
// the pair belongs to the registered pipeline, which the file does not
// show, so none is found.
func (c *conformance) pdSides() (pre, dec []pdSide) {
	for _, s := range c.d.Doc.Stages() {
		id, _ := s.ID()
		side := pdSide{stage: s, id: id, kv: s.KVTransferSettings()}
		var isPre, isDec bool
		switch {
		case c.d.Planned != nil:
			isPre, isDec = id == c.d.Planned.Prefill, id == c.d.Planned.Decode
		case c.d.Doc.Dialect == StageArgs:
			isPre, isDec = s.Flag("is_prefill_only"), s.Flag("is_decode_only")
		}
		if isPre {
			pre = append(pre, side)
		}
		if isDec {
			dec = append(dec, side)
		}
	}
	return pre, dec
}

// pdPair applies the release's PD validator to the pair.
func (c *conformance) pdPair() {
	pre, dec := c.pdSides()
	if len(pre) != 1 || len(dec) != 1 {
		// At most one pair; a config checked alone may have none.
		if c.r.Validator.Has(CheckOnePair) && (c.d.Planned != nil || len(pre)+len(dec) > 0) {
			c.add(diagcode.ReleasePDPair, "vllm-omni %s runs PD with exactly one prefill and one decode stage; found %d and %d", c.r.Version, len(pre), len(dec))
		}
		return
	}
	for _, pc := range pairChecks {
		if c.r.Validator.Has(pc.check) {
			pc.run(c, pre[0], dec[0])
		}
	}
}

// pairChecks are the PD validator's checks of one prefill p and decode d,
// each a check the release's validator may make, in the order this
// reports them.
var pairChecks = []struct {
	check string
	run   func(c *conformance, p, d pdSide)
}{
	{CheckKVConfigPresent, (*conformance).kvConfigPresent},
	{CheckRoles, (*conformance).kvRoles},
	{CheckDecodeReadsPrefill, (*conformance).decodeReadsPrefill},
	{CheckSameConnector, (*conformance).sameConnector},
	{CheckBuffers, (*conformance).sameBuffers},
	{CheckEqualTP, (*conformance).equalTensorParallel},
	{CheckPrefillEntry, (*conformance).prefillEntry},
}

func (c *conformance) kvConfigPresent(p, d pdSide) {
	for _, s := range []pdSide{p, d} {
		if !s.kv.IsMapping() {
			c.add(diagcode.ReleaseKVTransferConfig, "%s has no kv_transfer_config mapping", s.stage.Describe())
		}
	}
}

func (c *conformance) kvRoles(p, d pdSide) {
	if r := p.kvString("kv_role"); r != "kv_producer" && r != "kv_both" {
		c.add(diagcode.ReleaseKVRole, "prefill %s has kv_role %q; the validator wants kv_producer or kv_both", p.stage.Describe(), r)
	}
	if r := d.kvString("kv_role"); r != "kv_consumer" && r != "kv_both" {
		c.add(diagcode.ReleaseKVRole, "decode %s has kv_role %q; the validator wants kv_consumer or kv_both", d.stage.Describe(), r)
	}
}

// decodeReadsPrefill is a stage_args check: the stages dialect's edges
// are the pipeline's, not the stages'.
func (c *conformance) decodeReadsPrefill(p, d pdSide) {
	if c.d.Doc.Dialect != StageArgs {
		return
	}
	if ins, _, _ := d.stage.Inputs(); !slices.Contains(ins, p.id) {
		c.add(diagcode.ReleaseDecodeInput, "decode %s does not list prefill stage %d in engine_input_source", d.stage.Describe(), p.id)
	}
}

func (c *conformance) sameConnector(p, d pdSide) {
	if a, b := p.kvString("kv_connector"), d.kvString("kv_connector"); a == "" || a != b {
		c.add(diagcode.ReleaseKVConnector, "prefill uses %q and decode %q; the validator wants one non-empty kv_connector", a, b)
	}
}

func (c *conformance) sameBuffers(p, d pdSide) {
	for _, k := range []string{"kv_buffer_device", "kv_buffer_size"} {
		a, aok := p.kv.String(k)
		b, bok := d.kv.String(k)
		if aok && bok && a != b {
			c.add(diagcode.ReleaseKVBuffer, "%s is %s on prefill and %s on decode", k, a, b)
		}
	}
}

func (c *conformance) equalTensorParallel(p, d pdSide) {
	if a, b := tensorParallel(p.stage), tensorParallel(d.stage); a != b {
		c.add(diagcode.ReleaseTensorParallel, "prefill has tensor_parallel_size %d and decode %d; vllm-omni %s refuses any difference", a, b, c.r.Version)
	}
}

// prefillEntry is a stage_args check, as decodeReadsPrefill.
func (c *conformance) prefillEntry(p, _ pdSide) {
	if c.d.Doc.Dialect != StageArgs {
		return
	}
	if ins, _, _ := p.stage.Inputs(); p.id != 0 || len(ins) > 0 {
		c.add(diagcode.ReleasePrefillEntry, "prefill %s is not stage 0 with no inputs; requests enter at stage 0 and only there is prefill held to one token", p.stage.Describe())
	}
}

func tensorParallel(s stageconfig.Stage) int {
	if v, ok := s.EngineInt("tensor_parallel_size"); ok {
		return v
	}
	return 1
}

// connectorsLoadable: the PD pair's KV connector must be one the
// release's vLLM has, MultiConnector's children included. A connector
// loaded from kv_connector_module_path is the user's own class.
func (c *conformance) connectorsLoadable() {
	pre, dec := c.pdSides()
	for _, side := range append(pre, dec...) {
		s, kv := side.stage, side.kv
		if kv.Has("kv_connector_module_path") {
			continue
		}
		// The connector, or MultiConnector's children but those loaded
		// from their own module path.
		for _, conf := range append([]stageconfig.Settings{kv}, kv.Get("kv_connector_extra_config").Entries("connectors")...) {
			if conf.Has("kv_connector_module_path") {
				continue
			}
			if name, ok := conf.String("kv_connector"); ok && !c.r.KVConnectors.Has(name) {
				c.add(diagcode.ReleaseKVConnectorUnknown, "%s names %s, which vllm-omni %s (vLLM %s) cannot load", s.Describe(), name, c.r.Version, c.r.VLLM)
			}
		}
	}
}

// handoffGate: the PD pair's connector must hand decode the
// remote_request_id the release's orchestrator demands of every PD request.
// A connector loaded from its own module is the user's class, not judged.
func (c *conformance) handoffGate() {
	pre, _ := c.pdSides()
	for _, side := range pre {
		kv := side.kv
		name, _ := kv.String("kv_connector")
		// A class from the user's own module is theirs to judge; vLLM's
		// own module path names vLLM's class.
		if mod, _ := kv.String("kv_connector_module_path"); name == "" || mod != "" && !strings.HasPrefix(mod, "vllm.distributed.kv_transfer") {
			continue
		}
		var children []string
		for _, child := range kv.Get("kv_connector_extra_config").Entries("connectors") {
			if n, _ := child.String("kv_connector"); n != "" {
				children = append(children, n)
			}
		}
		if why := c.r.Handoff.Failure(name, children); why != "" {
			c.add(diagcode.ReleaseHandoffGate, "prefill %s: %s in its kv_transfer_params, and vllm-omni %s fails every PD request without it (%s)", side.stage.Describe(), why, c.r.Version, c.r.Handoff.Source)
		}
	}
}

// processors: every input processor a stage names in a module the row
// read must be one that module defines.
func (c *conformance) processors() {
	for _, s := range c.d.Doc.Stages() {
		fn, ok := s.String("custom_process_input_func")
		if !ok {
			continue
		}
		if known, present := c.r.Processors.Lookup(fn); known && !present {
			c.add(diagcode.ReleaseProcessorMissing, "%s names custom_process_input_func %s, which vllm-omni %s does not define (%s)", s.Describe(), fn, c.r.Version, c.r.Processors.Source)
		}
	}
}

// stageEnv: each stage's runtime.env must reach its engine. A whole-pipeline
// process carries it only on a release that applies it; a stage's own
// process must hold it in its environment, since a headless process never
// applies it and a head only where the release does.
func (c *conformance) stageEnv() {
	if c.d.Envs == nil {
		return
	}
	byID := map[int]stageconfig.Stage{}
	for _, s := range c.d.Doc.Stages() {
		if id, ok := s.ID(); ok {
			byID[id] = s
		}
	}
	for i, argv := range c.d.Argvs {
		if i >= len(c.d.Envs) {
			break
		}
		if !slices.Contains(argv, FlagStageID) {
			if c.r.StageEnv.Applied {
				continue
			}
			for _, s := range c.d.Doc.Stages() {
				if vars, _ := s.EnvVars(); len(vars) > 0 {
					c.add(diagcode.ReleaseStageEnvUnapplied, "launch %d runs %s in one process with every other stage, but vllm-omni %s does not apply a stage's runtime.env there (%s), so %s never reach its engine", i, s.Describe(), c.r.Version, c.r.StageEnv.Source, strings.Join(sortedNames(vars), ", "))
				}
			}
			continue
		}
		id, err := strconv.Atoi(valueOf(argv, FlagStageID))
		if err != nil {
			continue // commandLines says so
		}
		s, ok := byID[id]
		if !ok {
			continue
		}
		if c.r.StageEnv.Applied && !slices.Contains(argv, FlagHeadless) {
			continue
		}
		// An entry no process can get as written is Lint's to report.
		vars, _ := s.EnvVars()
		for _, k := range sortedNames(vars) {
			if got, ok := c.d.Envs[i][k]; !ok || got != vars[k] {
				c.add(diagcode.ReleaseStageEnvUnapplied, "launch %d runs %s, whose runtime.env sets %s=%s, but its process environment does not; the process applies no runtime.env on vllm-omni %s (%s)", i, s.Describe(), k, vars[k], c.r.Version, c.r.StageEnv.Source)
			}
		}
	}
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// hostOf is where a stage runs: the plan's host, or what the config says
// through VLLM_HOST_IP ("" when unknown).
func (c *conformance) hostOf(id int, s stageconfig.Stage) string {
	if c.d.Planned != nil {
		return c.d.Planned.Hosts[id]
	}
	h, _ := s.EnvVar("VLLM_HOST_IP")
	return h
}

// edges are the data paths the release wires: each stage's
// engine_input_source in stage_args, the top-level edges in stages (where
// topology keys on a stage do nothing).
func (c *conformance) edges() [][2]int {
	var out [][2]int
	if c.d.Doc.Dialect == Stages {
		for _, e := range c.d.Doc.Edges().List {
			out = append(out, [2]int{e.From, e.To})
		}
		return out
	}
	for _, s := range c.d.Doc.Stages() {
		to, _ := s.ID()
		ins, _, _ := s.Inputs()
		for _, from := range ins {
			out = append(out, [2]int{from, to})
		}
	}
	return out
}

// crossHostEdges: an edge between stages on different hosts must name, at
// both ends, a defined connector that reaches another host. Where a host is
// not known (a config alone that sets VLLM_HOST_IP on some stages only),
// the edge is not judged.
func (c *conformance) crossHostEdges() {
	byID := map[int]stageconfig.Stage{}
	for _, s := range c.d.Doc.Stages() {
		if id, ok := s.ID(); ok {
			byID[id] = s
		}
	}
	defs := c.d.Doc.ConnectorClasses()
	for _, e := range c.edges() {
		from, toID := e[0], e[1]
		src, ok1 := byID[from]
		to, ok2 := byID[toID]
		if !ok1 || !ok2 {
			continue
		}
		hf, ht := c.hostOf(from, src), c.hostOf(toID, to)
		if hf == ht || hf == "" || ht == "" {
			continue
		}
		out := connectorRef(src, "output_connectors", "to_stage_", toID)
		in := connectorRef(to, "input_connectors", "from_stage_", from)
		switch {
		case out == "" || in == "":
			c.add(diagcode.ReleaseCrossHostEdge, "edge %d → %d crosses hosts (%s to %s) but names no connector at both ends; it would get a SharedMemoryConnector, which cannot cross hosts", from, toID, hf, ht)
		case out != in:
			c.add(diagcode.ReleaseCrossHostEdge, "edge %d → %d names %q at one end and %q at the other", from, toID, out, in)
		case !slices.Contains(crossHostConnectors, defs[out]):
			c.add(diagcode.ReleaseCrossHostEdge, "edge %d → %d crosses hosts through %q (%s), which does not reach another host", from, toID, out, defs[out])
		}
	}
}

// connectorRef is the connector the stage names for one edge: the entry
// prefix+other of its input_connectors or output_connectors (key); "" when
// it names none.
func connectorRef(s stageconfig.Stage, key, prefix string, other int) string {
	want := prefix + strconv.Itoa(other)
	for _, ref := range s.ConnectorRefs(key) {
		if ref.Key == want {
			return ref.Name
		}
	}
	return ""
}

// envPorts: a class that binds a port from an environment variable while
// its peer dials the port its extra config names (kvconnector.Entry.EnvPort,
// with the sources: Mooncake's bootstrap port) needs the two equal on each
// PD stage that loads it.
func (c *conformance) envPorts() {
	pre, dec := c.pdSides()
	for _, side := range append(pre, dec...) {
		s := side.stage
		// The class alone, or as a MultiConnector child.
		configs := append([]stageconfig.Settings{side.kv}, side.kv.Get("kv_connector_extra_config").Entries("connectors")...)
		for _, kv := range configs {
			name, _ := kv.String("kv_connector")
			e, _ := kvconnector.Lookup(name)
			bound := e.EnvPort
			if bound == nil {
				continue
			}
			port, ok := kv.Get("kv_connector_extra_config").String(bound.Extra)
			env, _ := s.EnvVar(bound.Env)
			if ok && env != port {
				c.add(diagcode.ReleaseMooncakeBootstrapEnv, "%s has %s %s but %s %q: vLLM binds the variable (%d when unset) and decode dials the other",
					s.Describe(), bound.Extra, port, bound.Env, env, bound.Default)
			}
		}
	}
}

// commandLines: every launch is `vllm serve <model> --omni ...` with flags
// the release has, combined as its serve.py validate() allows
// (vllm_omni/entrypoints/cli/serve.py@0027c20a), and a stage-based launch
// starts every stage once with one head.
func (c *conformance) commandLines() {
	replicas := map[int]int{}
	for _, st := range c.d.Doc.Stages() {
		if id, ok := st.ID(); ok {
			replicas[id] = st.NumReplicas()
		}
	}
	launched := map[int]int{} // stage id -> its stage-based processes
	heads := 0
	for i, argv := range c.d.Argvs {
		if len(argv) < 3 || argv[0] != "vllm" || argv[1] != "serve" || strings.HasPrefix(argv[2], "-") || !slices.Contains(argv, "--omni") {
			c.add(diagcode.ReleaseCommand, "launch %d is not `vllm serve <model> --omni ...`: %q", i, argv)
			continue
		}
		c.launchFlags(i, argv)
		id, ok := c.launchStage(i, argv)
		if !ok {
			continue
		}
		launched[id]++
		if !slices.Contains(argv, FlagHeadless) {
			heads++
		}
		c.stageReplicas(i, argv, id, replicas[id])
	}
	c.launchCounts(launched, heads)
}

// launchFlags: launch i passes only stage-based flags the release has, in
// the combinations its serve.py accepts.
func (c *conformance) launchFlags(i int, argv []string) {
	has := func(f string) bool { return slices.Contains(argv, f) }
	for _, f := range []string{FlagStageID, FlagHeadless, FlagOmniMasterAddress, FlagOmniMasterPort, FlagOmniReplicaAddr, FlagOmniDPSizeLocal} {
		if has(f) && !c.r.StageCLI.Has(f) {
			c.add(diagcode.ReleaseCLIFlag, "launch %d passes %s, which vllm-omni %s does not have", i, f, c.r.Version)
		}
	}
	if has(FlagStageID) && (!has(FlagOmniMasterAddress) || !has(FlagOmniMasterPort)) {
		c.add(diagcode.ReleaseCLIFlag, "launch %d passes %s without both master flags", i, FlagStageID)
	}
	if has(FlagHeadless) && !has(FlagStageID) {
		c.add(diagcode.ReleaseCLIFlag, "launch %d is headless without %s", i, FlagStageID)
	}
	if has(FlagOmniReplicaAddr) && !has(FlagHeadless) {
		c.add(diagcode.ReleaseCLIFlag, "launch %d passes %s without %s", i, FlagOmniReplicaAddr, FlagHeadless)
	}
}

// launchStage is the stage launch i runs, and false for a whole-pipeline
// launch or a stage id that is no integer.
func (c *conformance) launchStage(i int, argv []string) (int, bool) {
	if !slices.Contains(argv, FlagStageID) {
		return 0, false
	}
	id, err := strconv.Atoi(valueOf(argv, FlagStageID))
	if err != nil {
		c.add(diagcode.ReleaseCLIFlag, "launch %d: %s takes one integer", i, FlagStageID)
		return 0, false
	}
	return id, true
}

// launchCounts: one whole-pipeline launch, or a stage-based launch of
// every stage once with one head among them.
func (c *conformance) launchCounts(launched map[int]int, heads int) {
	if len(launched) == 0 {
		if len(c.d.Argvs) > 1 {
			c.add(diagcode.ReleaseLaunches, "%d whole-pipeline launches; one runs every stage", len(c.d.Argvs))
		}
		return
	}
	if heads != 1 {
		c.add(diagcode.ReleaseLaunches, "a stage-based launch needs exactly one head (a process without %s); found %d", FlagHeadless, heads)
	}
	for _, s := range c.d.Doc.Stages() {
		if id, ok := s.ID(); ok && launched[id] != 1 {
			c.add(diagcode.ReleaseLaunches, "stage %d is launched %d times; each stage needs one process", id, launched[id])
		}
	}
}

// stageReplicas: a stage-based process starts --omni-dp-size-local
// replicas of its own stage, 1 unless given, and the head writes that over
// its own stage's num_replicas while it expects the config's count of every
// other (vllm_omni/engine/async_omni_engine.py@f92d84fc :475-505,
// entrypoints/cli/serve.py@f92d84fc run_headless :685-727), so the two must
// agree. Before the flag (0.22.0) a stage-based launch starts one replica
// per process: 0.21.0rc1 raises for an LLM stage with more
// (async_omni_engine.py@eb4e60ee :445-469), 0.20.0 reads no num_replicas.
func (c *conformance) stageReplicas(i int, argv []string, id, want int) {
	got := 1
	if v := valueOf(argv, FlagOmniDPSizeLocal); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.add(diagcode.ReleaseCLIFlag, "launch %d: %s takes an integer of at least 1, not %q", i, FlagOmniDPSizeLocal, v)
			return
		}
		got = n
	}
	switch {
	case want > 1 && !c.r.StageCLI.Has(FlagOmniDPSizeLocal):
		c.add(diagcode.ReleaseCLIFlag, "launch %d runs stage %d, whose num_replicas is %d, but vllm-omni %s's stage-based launch starts one replica per process (it has no %s)", i, id, want, c.r.Version, FlagOmniDPSizeLocal)
	case got != want:
		c.add(diagcode.ReleaseCLIFlag, "launch %d starts %d replica(s) of stage %d (%s), but its num_replicas is %d: the process starts as many as the flag says, and the head expects the config's count", i, got, id, FlagOmniDPSizeLocal, want)
	}
}

func valueOf(argv []string, flag string) string {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag {
			return argv[i+1]
		}
	}
	return ""
}
