package pipeline

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// The plan writes files on a machine (the deploy config, the check script,
// the unit and its drop-ins) and names files and a directory the machine
// holds (the environment file systemd reads, the cache the processes write,
// the vllm and Python the units run). checkMachinePaths is the one place
// that judges them against each other, after the checks of each value on
// its own (absolute, no control characters, plain for systemd): each names
// one file (or, for the cache, one directory) of its own. A deploy config
// written over the environment file, the check script or a unit replaces
// that file on the machine, and a file another path lies under cannot be
// written at all, so every such collision is an error at plan time, one for
// each colliding pair, at the attribute to change.
//
// What may be shared is shared on purpose: a file may lie under the cache
// (a config the processes could rewrite is still checked against
// config_sha256 before each start), and vllm and Python may be anything to
// each other, since the plan writes neither. The units' directory is the
// plan's alone: systemd reads every unit file and each unit's .d directory
// there as unit configuration (systemd.unit(5), "Unit File Load Path"), so
// no other file of the plan belongs there; and neither the units nor the
// check script, which systemd and the units run before any check, may lie
// in the cache, which the units let their processes write
// (CacheDirectory=, ReadWritePaths=).
//
// The provider sees one pipeline at a time: two pipelines planned for one
// machine must be given distinct config paths and unit prefixes by whatever
// plans them together (examples/modules/pd-host-packing does, and checks
// it).

// machinePath is one path on the machine that the plan writes or names.
type machinePath struct {
	attr  Path   // the attribute that sets it; nil for the units' directory
	what  string // what it is, after its attribute: "the deploy config"
	value string
	given bool // the user set it; a default is never the one to blame
	dir   bool // a directory: other paths may lie under it
	// runs is a file the plan only runs (vllm, Python): two of them may
	// be anything to each other.
	runs bool
	// trusted is a file systemd or the units run before any check (the
	// units, the check script), which must not lie where the processes
	// write.
	trusted bool
	example string // a path of its own, for the fix; "" for vllm and Python
	// unchecked is a value no check of its own judges (not an input):
	// it is refused here when it is not absolute or holds a control
	// character.
	unchecked bool
}

// fix says what to set instead.
func (m machinePath) fix() string {
	if m.example == "" {
		return "set " + m.attr.String() + " to the executable itself"
	}
	kind := "a file"
	if m.dir {
		kind = "a directory"
	}
	return "give " + m.attr.String() + " " + kind + " of its own, such as " + m.example
}

func (m machinePath) name() string {
	if m.attr == nil {
		return m.what
	}
	return m.attr.String() + " (" + m.what + ")"
}

// checkMachinePaths judges every path the plan writes or names on a
// machine against the others, and config_path, environment_file and
// check_script_path as files. A value a check of its own refuses is not
// judged again.
func checkMachinePaths(s Spec, ds *Diagnostics) {
	svc := s.service().withDefaults()
	systemdPath := AttrPath("systemd")
	var paths []machinePath
	// plain: checkService refuses the value unless systemd.PlainPath
	// passes it; otherwise checkSpec refuses a control character.
	add := func(m machinePath, plain bool) {
		v := m.value
		if m.unchecked {
			var own Diagnostics
			checkPathString(&own, m.attr, v, m.attr.String(), diagcode.PathNotAFile, diagcode.PathNotAFile)
			if len(own) > 0 {
				*ds = append(*ds, own...)
				return
			}
		}
		switch {
		case !strings.HasPrefix(v, "/"):
			return // refused as not absolute, or a bare python3 found on PATH
		case plain && systemd.PlainPath(v) != nil, !plain && !pathCharsOK(v):
			return // refused by the check of the value alone
		case m.dir && m.given && systemDirs[cleanPath(v)]:
			return // refused as a system directory (cache_dir_system)
		case !m.dir && !m.runs && !checkIsFile(m, ds):
			return
		}
		paths = append(paths, m)
	}
	add(machinePath{attr: AttrPath("config_path"), what: "the deploy config the plan writes", value: s.configPath(), given: s.ConfigPath != "",
		example: DefaultConfigPath}, false)
	add(machinePath{attr: systemdPath.Attr("environment_file"), what: "the secrets file systemd reads", value: svc.EnvironmentFile, given: s.Service.EnvironmentFile != "",
		example: DefaultEnvironmentFile}, true)
	add(machinePath{attr: systemdPath.Attr("cache_dir"), what: "the directory the processes write", value: svc.CacheDir, given: s.Service.CacheDir != "", dir: true,
		example: DefaultCacheDir}, true)
	add(machinePath{attr: systemdPath.Attr("vllm_path"), what: "the vllm the units run", value: svc.VLLMPath, given: s.Service.VLLMPath != "", runs: true}, true)
	if s.Service.PythonPath != "" {
		add(machinePath{attr: systemdPath.Attr("python_path"), what: "the Python the units run", value: svc.PythonPath, given: true, runs: true}, true)
	} else if s.Container == nil && systemd.PlainPath(svc.VLLMPath) == nil {
		// The default is python3 beside vllm: vllm_path placed it.
		add(machinePath{attr: systemdPath.Attr("vllm_path"), what: "its directory's python3, python_path's default, which the units run", value: svc.PythonPath,
			given: s.Service.VLLMPath != "", runs: true}, true)
	}
	// Not an input: the Go API may set it, and it is judged as the other
	// files are.
	add(machinePath{attr: AttrPath("check_script_path"), what: "the check script every host keeps", value: svc.CheckScriptPath, given: s.Service.CheckScriptPath != "", trusted: true, unchecked: true,
		example: DefaultCheckScriptPath}, false)
	paths = append(paths, machinePath{what: "systemd's unit directory", value: UnitDir, dir: true, trusted: true})

	for i, a := range paths {
		for _, b := range paths[i+1:] {
			judgePair(a, b, svc.UnitPrefix, ds)
		}
	}
}

// pathCharsOK reports whether checkPathChars passes v.
func pathCharsOK(v string) bool {
	var ds Diagnostics
	checkPathChars(&ds, nil, v, "", diagcode.ConfigPathControlCharacter)
	return len(ds) == 0
}

// checkIsFile refuses a file's path that names a directory or reads
// otherwise than it is written, and reports whether it names one file.
func checkIsFile(m machinePath, ds *Diagnostics) bool {
	v, name := m.value, m.attr.String()
	switch clean := path.Clean(v); {
	case v == "/":
		ds.errorf(diagcode.PathNotAFile, m.attr, name+" is not a file", `it is "/", the root directory; %s.`, m.fix())
	case strings.HasSuffix(v, "/"):
		ds.errorf(diagcode.PathNotAFile, m.attr, name+" is not a file",
			"%q ends in /, so it names a directory; write the path of %s with the file's own name last, such as %q.", v, m.what, path.Join(clean, path.Base(m.example)))
	case clean != v:
		ds.errorf(diagcode.PathNotAFile, m.attr, name+" is not normalized",
			"%q holds //, a . or a .. component, so it reads otherwise than it is written; write it as %q, if that is the file meant.", v, clean)
	default:
		return true
	}
	return false
}

// judgePair reports a collision of two paths, at the first one the user
// set (the other is then a default or set after it).
func judgePair(a, b machinePath, prefix string, ds *Diagnostics) {
	if a.runs && b.runs {
		return
	}
	blamed, other := a, b
	if !a.given && b.given || a.attr == nil {
		blamed, other = b, a
	}
	if blamed.attr == nil {
		return // two of the plan's own paths, which the tests hold apart
	}
	summary := blamed.attr.String() + " collides with " + other.describeShort()
	switch {
	case a.value == b.value && a.dir && b.dir:
		// The cache is the units' directory.
		ds.errorf(diagcode.PathCollision, blamed.attr, summary,
			"%q is also %s, where the plan writes its units, and the units let their processes write cache_dir, so a process could rewrite them; %s.", blamed.value, other.describe(prefix, blamed.value), blamed.fix())
	case a.value == b.value && (a.dir || b.dir):
		kinds := "a directory, which cannot also be a file"
		if blamed.dir {
			kinds = "a file, which cannot also be a directory"
		}
		ds.errorf(diagcode.PathCollision, blamed.attr, summary,
			"%q is also %s, %s; %s.", blamed.value, other.describe(prefix, blamed.value), kinds, blamed.fix())
	case a.value == b.value:
		ds.errorf(diagcode.PathCollision, blamed.attr, summary,
			"%q is also %s, so writing one would overwrite the other; %s.", blamed.value, other.describe(prefix, blamed.value), blamed.fix())
	case under(b.value, a.value):
		judgeUnder(blamed, other, a, b, prefix, summary, ds)
	case under(a.value, b.value):
		judgeUnder(blamed, other, b, a, prefix, summary, ds)
	}
}

// judgeUnder judges inner, which lies under outer.
func judgeUnder(blamed, other, outer, inner machinePath, prefix, summary string, ds *Diagnostics) {
	blamedOuter := blamed.value == outer.value
	switch {
	case !outer.dir:
		if blamedOuter {
			ds.errorf(diagcode.PathCollision, blamed.attr, summary,
				"%q is %s, a file, but %s lies under it (%q); %s.", blamed.value, blamed.what, other.describe(prefix, inner.value), inner.value, blamed.fix())
			return
		}
		ds.errorf(diagcode.PathCollision, blamed.attr, summary,
			"%q lies under %q, %s, which is a file, not a directory; %s.", blamed.value, outer.value, other.describeShort(), blamed.fix())
	case outer.attr == nil:
		// A path in the units' directory that is not one of the units.
		ds.errorf(diagcode.PathCollision, blamed.attr, blamed.attr.String()+" is in systemd's unit directory",
			"%q is %s: systemd reads %s and each unit's .d directory as unit configuration, and only the plan's units belong there; %s.",
			inner.value, outer.describe(prefix, inner.value), UnitDir, blamed.fix())
	case inner.trusted:
		// The cache holds the units or the check script.
		what := inner.describeShort() + " (" + strconv.Quote(inner.value) + ")"
		if inner.attr == nil {
			what = "the units the plan writes in " + UnitDir
		}
		ds.errorf(diagcode.PathCollision, blamed.attr, summary,
			"%q holds %s, and the units let their processes write cache_dir, so a process could rewrite what systemd and the units run before any check; %s.", outer.value, what, blamed.fix())
	}
}

// under reports whether p lies strictly under the directory dir; both are
// clean absolute paths.
func under(p, dir string) bool {
	return dir == "/" && p != "/" || strings.HasPrefix(p, dir+"/")
}

// describeShort names the path as a message's summary does.
func (m machinePath) describeShort() string {
	if m.attr == nil {
		return UnitDir
	}
	return m.attr.String()
}

// describe says what m is, for a message about the path v, which is m or
// lies under it: in the units' directory, the unit v is when it is one.
func (m machinePath) describe(prefix, v string) string {
	if m.attr != nil {
		return m.name()
	}
	rel, ok := strings.CutPrefix(v, UnitDir+"/")
	if !ok {
		return m.what
	}
	stage := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `-stage@([0-9]+)\.service\.d/plan\.conf$`)
	switch {
	case rel == templateName(prefix):
		return "the template unit the plan writes (systemd_unit.path)"
	case rel == prefix+".service":
		return "the whole-pipeline unit the plan writes (systemd_unit.path)"
	case stage.MatchString(rel):
		return "stage " + stage.FindStringSubmatch(rel)[1] + "'s drop-in the plan writes (launches[*].processes[*].systemd_dropin.path)"
	}
	return "in systemd's unit directory " + UnitDir
}
