package pipeline

import (
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// The units of a container launch keep the host launch's shape (one
// template and a drop-in per stage, or one unit for a whole-pipeline
// process; the same ordering, restart policy and install), with what
// runs a container in place of what runs vllm on the machine: the
// runtime's directives (container.UnitDirectives). Each stage's command
// line is its drop-in's whole ExecStart=, not words of the template's
// split from variables: a runtime word such as docker's --gpus
// "device=2,3", or a stage's variable by value, cannot pass through
// them. The units set no User= and no sandbox: DESIGN.md says why.

// podmanStartTimeout bounds a podman unit's start-up, which for its
// Type=notify ends when conmon reports the container running: after the
// runtime has pulled the image, many gigabytes on a machine's first
// start. Docker's unit is Type=exec and has started once the client runs.
const podmanStartTimeout = 1800

// containerDirectives are the runtime's directives for the unit that runs
// spec's container, split: exec are its commands, each of which names
// the container; unit and shared are the same for every container of the
// runtime.
func containerDirectives(spec container.Spec) (unit, shared, exec []systemd.Directive, err error) {
	d, err := container.UnitDirectives(spec)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, dir := range d.Service {
		if isExec(dir.Key) {
			exec = append(exec, dir)
		} else {
			shared = append(shared, dir)
		}
	}
	return d.Unit, shared, exec, nil
}

// containerUnit is the unit of a container launch but for its commands:
// the runtime's [Unit] and shared [Service] directives with the host
// units' environment file (the secrets the runtime passes on by name),
// journal name, device nodes and restart policy; exec, the commands, follow
// the device nodes.
func containerUnit(c unitContext, what, order string, template bool, spec container.Spec, withExec bool) (systemd.Unit, error) {
	unitDirs, shared, exec, err := containerDirectives(spec)
	if err != nil {
		return systemd.Unit{}, err
	}
	unit := unitHead(c, what, order, template)
	unit.Sections[0].Directives = append(unit.Sections[0].Directives, unitDirs...)
	cache, err := containerCacheDirective(c.service.CacheDir)
	if err != nil {
		return systemd.Unit{}, err
	}
	svc := append([]systemd.Directive{}, shared...)
	svc = append(svc,
		systemd.Directive{Key: "EnvironmentFile", Value: "-" + c.service.EnvironmentFile, Comment: "Secrets (HF_TOKEN=...), passed on to the container by name: never in Terraform state."},
		systemd.Directive{Key: "SyslogIdentifier", Value: "%N"}, cache, modprobe)
	if withExec {
		svc = append(svc, exec...)
	}
	svc = append(svc, restartPolicy...)
	timeout := unitStartTimeout
	if spec.Runtime == container.Podman {
		timeout = podmanStartTimeout
	}
	svc = append(svc, systemd.Directive{Key: "TimeoutStartSec", Value: strconv.Itoa(timeout)})
	return withService(unit, svc), nil
}

// containerCacheDirective makes the model cache exist before the runtime
// mounts it: podman refuses a bind mount whose source is missing (its
// status 125, which restarts the unit for ever), and docker would create
// it itself, root's, unseen. Under /var/cache systemd makes it
// (CacheDirectory=; root's, as the containers run as the image's root);
// elsewhere the unit makes it first.
func containerCacheDirective(dir string) (systemd.Directive, error) {
	if rel, ok := strings.CutPrefix(dir, "/var/cache/"); ok && rel != "" {
		return systemd.Directive{Key: "CacheDirectory", Value: rel, Comment: "The model cache the containers mount, made before they start."}, nil
	}
	mkdir, err := systemd.Command([]string{"/bin/mkdir", "-p", dir})
	if err != nil {
		return systemd.Directive{}, err
	}
	return systemd.Directive{Key: "ExecStartPre", Value: mkdir, Comment: "The model cache the containers mount, made before they start."}, nil
}

// containerWholeUnit is the unit of a whole-pipeline process in a
// container: one process, so its unit holds its commands.
func containerWholeUnit(c unitContext, proc Process) (UnitFile, error) {
	u, err := containerUnit(c, "(all stages)", "One process runs every stage.", false, *proc.run, true)
	if err != nil {
		return UnitFile{}, err
	}
	return UnitFile{Path: UnitDir + "/" + proc.UnitName, Content: u.Render()}, nil
}

// containerTemplate is the template every stage's container unit runs
// from: what the runtime's units share; each drop-in adds its commands.
func containerTemplate(c unitContext) (UnitFile, error) {
	name := templateName(c.service.UnitPrefix)
	spec := c.container.specOf(Process{UnitName: name}, c.service.CacheDir)
	u, err := containerUnit(c, "stage %i", "", true, spec, false)
	if err != nil {
		return UnitFile{}, err
	}
	return UnitFile{Path: UnitDir + "/" + name, Content: u.Render()}, nil
}

// containerDropIn is what one stage's instance adds to the container
// template: how it is bound to the head on its host, and the commands that
// run, stop and remove its container. beside are the processes of its
// host, itself among them.
func containerDropIn(c unitContext, proc Process, beside []Process) (UnitFile, error) {
	_, _, exec, err := containerDirectives(*proc.run)
	if err != nil {
		return UnitFile{}, err
	}
	unit := systemd.Unit{}
	if deps := headBinding(c, proc, beside); len(deps) > 0 {
		unit.Sections = append(unit.Sections, systemd.Section{Name: "Unit", Directives: deps})
	}
	unit.Sections = append(unit.Sections, systemd.Section{Name: "Service", Directives: exec})
	return UnitFile{Path: dropInPath(proc.UnitName), Content: unit.Render()}, nil
}
