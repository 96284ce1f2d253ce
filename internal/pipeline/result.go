package pipeline

// Result is a planned pipeline: the deploy config and everything the
// machines that run it need to know.
type Result struct {
	ID           string // content hash of ConfigYAML and every launch command
	Format       string
	ConfigYAML   string
	Stages       []StageInfo
	Edges        []Edge
	Ports        []Port
	GPUCount     int
	ServeArgs    []string
	ServeCommand string
	Diagram      string
	Launches     []Launch
	Allocations  Allocations
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
	BootstrapPort      *int    // set on the PD pair only, for Mooncake
	Host               string  // "" on a single-host pipeline
	FinalOutput        bool
}

// Edge is a data path between two stages.
type Edge struct {
	From, To int
}

// Port is one port the deployment listens on.
type Port struct {
	Name    string
	Port    int
	StageID *int // nil for the API port
	Host    string
}

// Launch is what one host runs.
type Launch struct {
	Host     string
	StageIDs []int
	Argv     []string
	Command  string
	Env      map[string]string
	Ports    []int
}
