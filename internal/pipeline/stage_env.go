package pipeline

import (
	"fmt"
	"path"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/envvar"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// checkStageEnv judges the names of the user's base config's stage
// environments that the plan or vLLM treats specially (envvar.Lookup, the
// one table of them, with the reason and source of each): a stage's entry
// comes after the units' own Environment= lines and replaces them, so a
// name the plan writes is refused with the attribute that sets it, and a
// cache path is judged against the units' sandbox as systemd.cache_dir is.
// A preset holds none of them; the names the planner itself writes into a
// planned config (VLLM_HOST_IP, a connector's ports) are its own, which is
// why this reads the base config and not what Check reads. sb is the
// units' sandbox.
func checkStageEnv(base baseConfig, sb unitsSandbox, ds *Diagnostics) {
	if !base.user() {
		return
	}
	var paths []reachedPath
	for _, st := range base.doc.Stages() {
		for _, e := range st.EnvEntries() {
			s, ok := envvar.Lookup(e.Name)
			if !ok {
				continue
			}
			what := e.Map + "." + e.Name
			switch s.Treatment {
			case envvar.Refused:
				ds.errorf(diagcode.EnvVarPlanned, base.path, "a stage's environment sets a variable the plan writes",
					"line %d: %s (%s) %s; %s.", e.Line, what, st.Describe(), s.Reason, s.Fix)
			case envvar.WritablePath:
				if !path.IsAbs(e.Value) {
					ds.errorf(diagcode.SystemdPathProtected, base.path, what+" is where the units cannot write",
						"line %d: %s (%s) is %q, not an absolute path: the units start in /, which their ProtectSystem=strict makes read-only; %s.", e.Line, what, st.Describe(), e.Value, s.Fix)
					continue
				}
				paths = append(paths, reachedPath{attr: base.path, what: what, value: e.Value, need: systemd.Write, fix: s.Fix, stage: fmt.Sprintf("line %d: %s", e.Line, st.Describe())})
			}
		}
	}
	judgePaths(sb, paths, ds)
}
