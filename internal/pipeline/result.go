package pipeline

import (
	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// Result is a planned pipeline: the deploy config and everything the
// machines that run it need to know.
type Result struct {
	ID           string // content hash of ConfigYAML and every launch command
	Release      string // the vllm-omni release the plan is for ("0.24.0")
	Version      string // vllm_omni_version as written, or Release when unset
	Format       string
	ConfigPath   string // config_path as given, or the default
	APIPort      int    // api_port as given, or the default
	ConfigYAML   string
	ConfigSHA256 string // SHA-256 of ConfigYAML, which each process's preflight checks
	Stages       []StageInfo
	Edges        []Edge
	Ports        []Port
	GPUCount     int
	ServeArgs    []string
	ServeCommand string
	Diagram      string
	Launches     []Launch
	// SystemdUnit is the one unit file every host installs: the template
	// each stage runs from, or the unit of a whole-pipeline process.
	SystemdUnit UnitFile
	// CheckScriptPath is where every host keeps CheckScript, which the
	// units run as the preflight and health's commands call.
	CheckScriptPath string
	// Registration is the module every process imports before vllm-omni's
	// CLI runs, which registers the `pipeline:` the config names; nil when
	// the plan needs none.
	Registration *Registration
	Health       Health
	Allocations  Allocations
	// Settings the plan used, as given or chosen, for inputs left unset:
	// the entities read them back.
	Connector string    // connector.name
	Preset    string    // preset: the one loaded, as given or chosen from model; "" for a base_config
	PortRange PortRange // port_range
	Prefill   RoleSettings
	Decode    RoleSettings
}

// RoleSettings are the PD pair's settings on one side, as planned.
type RoleSettings struct {
	Devices            []int
	TensorParallelSize int
	MaxNumSeqs         int
	BootstrapPort      *int // the port the peer dials for the KV handoff (handshakePort); nil for a connector without one
}

// Health is how to tell the head serves the planned model.
type Health struct {
	Host             string // the head's address; 127.0.0.1 on one host
	Port             int
	LivenessURL      string // answers 200 once the API server runs
	ReadinessURL     string // lists the served models
	ReadinessCommand string
	// SmokeURL and SmokeCommand send one chat completion that must cross
	// the PD pair: prefill exports the KV cache and decode answers. A
	// handoff that fails fails the request, so the check fails too.
	SmokeURL     string
	SmokeCommand string
}

// Stage roles.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
	RoleStage   = "stage"
)

// StageInfo summarises one stage of the planned pipeline.
type StageInfo struct {
	StageID            int
	Role               string
	ModelStage         string
	Devices            []int
	TensorParallelSize int
	Inputs             []int
	KVRole             *string // set on the PD pair only
	BootstrapPort      *int    // the port the peer dials for the KV handoff (handshakePort); set on the PD pair only
	Host               string  // "" on a single-host pipeline
	FinalOutput        bool
}

// Edge is a data path between two stages.
type Edge = stageconfig.Edge

// Port is one port the deployment listens on.
type Port struct {
	Name    string
	Port    int
	StageID *int // nil for the API port
	Host    string
}

// Launch is what one host runs.
type Launch struct {
	Host      string // the address, or SingleHost when no stage names one
	StageIDs  []int
	Env       map[string]string
	Ports     []int
	GPUCount  int
	Processes []Process
}

// Process is one OS process a host runs: the whole pipeline on one host,
// or one stage with the stage-based launch.
type Process struct {
	StageID  *int   // nil for the whole-pipeline launch
	Role     string // head or headless
	Argv     []string
	Env      map[string]string // what the process needs beyond the unit's own settings
	Devices  []int             // GPU indices on the host, as the config's devices name them
	Ports    []NamedPort
	UnitName string
	// DropIn is what the stage's instance adds to the template unit; nil
	// for a whole-pipeline process, whose unit is the plan's SystemdUnit.
	DropIn *UnitFile

	host   string          // the stage's host ("" on one host)
	checks preflightChecks // what the preflight imports
	// checkWords are the process's own preflight options: the GPUs, the
	// transports and imports, and on a headless process the head's omni
	// master to wait for.
	checkWords []string
	// exec is what the unit runs, as systemd expands it: the preflight,
	// then `--` and vllm at its path.
	exec []string
	// ownArgs is where Argv's words that differ between stages are, but
	// the stage id: the template's ExecStart spells the others.
	ownArgs [2]int
	// run is, with a container launch, the container the unit runs the
	// process in.
	run *container.Spec
}

// NamedPort is one port a process listens on.
type NamedPort struct {
	Name string
	Port int
}

// Process roles.
const (
	ProcessHead     = "head"
	ProcessHeadless = "headless"
)
