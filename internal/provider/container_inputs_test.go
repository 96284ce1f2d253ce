package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// The container block through Terraform: its defaults (docker, NVIDIA's
// runtime, the release's image) and podman's CDI, for the resource and
// the data source alike; a plan that is stable once applied; a deploy
// config of container-local devices, another config than the host's.
func TestAccPDPipeline_Container(t *testing.T) {
	const hostAddr = "omni_pd_pipeline.host"
	dropIn := func(i int) tfjsonpath.Path {
		return tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(i).AtMapKey("systemd_dropin").AtMapKey("content")
	}
	for _, c := range []struct {
		name, block    string
		unit, run, gpu *regexp.Regexp
	}{
		{"defaults", `container = {}`, regexp.MustCompile(`(?m)^Requires=docker\.service$`),
			regexp.MustCompile(`(?m)^ExecStart=/usr/bin/docker run --rm --name vllm-omni-stage-0 --pull=missing --init --network host --ipc host .* docker\.io/vllm/vllm-omni:v0\.24\.0 /usr/bin/python3 `),
			regexp.MustCompile(`--runtime nvidia --gpus "\\"device=1\\""`)},
		{"podman", `container = { runtime = "podman", pull = "never", mounts = [{ source = "/srv/models", target = "/models", read_only = true }], options = ["--security-opt", "label=disable"] }`,
			regexp.MustCompile(`(?m)^Type=notify$`),
			regexp.MustCompile(`(?m)^ExecStart=/usr/bin/podman run .*--pull=never .*--volume /srv/models:/models:ro .*--security-opt label=disable docker\.io/vllm/vllm-omni:v0\.24\.0 `),
			regexp.MustCompile(`--device nvidia\.com/gpu=1 `)},
	} {
		t.Run(c.name, func(t *testing.T) {
			config := pipelineResource(c.block) + `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + c.block + `
}

resource "omni_pd_pipeline" "host" {
  model = "` + seedModel + `"
}
`
			checks := []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("systemd_unit").AtMapKey("content"), knownvalue.StringRegexp(c.unit)),
				plancheck.ExpectKnownValue(resAddr, dropIn(0), knownvalue.StringRegexp(c.run)),
				plancheck.ExpectKnownValue(resAddr, dropIn(1), knownvalue.StringRegexp(c.gpu)),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`(?s)stage_id: 1\n.*?devices: "0"`))),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages").AtSliceIndex(1).AtMapKey("devices"), knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(1)})),
			}
			accTest(t,
				resource.TestStep{
					Config:           config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.CompareValuePairs(resAddr, tfjsonpath.New("config_sha256"), hostAddr, tfjsonpath.New("config_sha256"), compare.ValuesDiffer()),
						statecheck.CompareValuePairs(resAddr, tfjsonpath.New("config_sha256"), "data.omni_pd_pipeline.test", tfjsonpath.New("config_sha256"), compare.ValuesSame()),
						statecheck.CompareValuePairs(resAddr, tfjsonpath.New("launches"), "data.omni_pd_pipeline.test", tfjsonpath.New("launches"), compare.ValuesSame()),
					},
				},
				resource.TestStep{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			)
		})
	}
}

// Each problem of the block is an error at its attribute, from the
// schema where the value alone tells, from the plan otherwise.
func TestAccPDPipeline_ContainerBadInputs(t *testing.T) {
	runBadInputs(t, []badInput{
		{name: "container runtime lxc", body: []string{`container = { runtime = "lxc" }`},
			attr: `container.runtime`, fix: `value must be one of`},
		{name: "container gpus all", body: []string{`container = { gpus = "all" }`},
			attr: `container.gpus`, fix: `value must be one of`},
		{name: "container pull sometimes", body: []string{`container = { pull = "sometimes" }`},
			attr: `container.pull`, fix: `value must be one of`},
		{name: "container image with a capital", body: []string{`container = { image = "vllm/Vllm-omni:v0.24.0" }`},
			attr: `container.image`, fix: `must be an image reference`},
		{name: "container podman with nvidia_runtime", body: []string{`container = { runtime = "podman", gpus = "nvidia_runtime" }`},
			attr: `container.gpus`, fix: `podman asks for NVIDIA's GPUs through CDI`, code: "container_invalid"},
		{name: "container option --network", body: []string{`container = { options = ["--network", "bridge"] }`},
			attr: `container.options\[0\]`, fix: `--network host`, code: "container_invalid"},
		{name: "container option that sets HF_HOME", body: []string{`container = { options = ["-e", "HF_HOME=/tmp"] }`},
			attr: `container.options\[0\]`, fix: `the plan sets HF_HOME`, code: "container_invalid"},
		{name: "container mount relative", body: []string{`container = { mounts = [{ source = "models", target = "/models" }] }`},
			attr: `container.mounts\[0\].source`, fix: `is not an absolute path`, code: "container_invalid"},
		{name: "container mount at the cache", body: []string{`container = { mounts = [{ source = "/srv/hf", target = "/var/cache/vllm-omni" }] }`},
			attr: `container.mounts\[0\].target`, fix: `mount elsewhere, or change systemd.cache_dir`, code: "container_invalid"},
		{name: "container runtime_path relative", body: []string{`container = { runtime_path = "docker" }`},
			attr: `container.runtime_path`, fix: `absolute`, code: "container_invalid"},
		{name: "container with a stage path no mount holds", body: []string{`container = {}`, `prefill = { engine_args = { tokenizer = "/opt/tokenizer" } }`},
			attr: `prefill.engine_args.tokenizer`, fix: `add a container.mounts entry`, code: "container_path_unmounted"},
	})
}

// The block's warnings, each at its attribute, with a plan: an image of
// another release, one pinned to nothing, and systemd.user, which the
// container units do not use. Every problem of the block comes in one
// plan with the other inputs'.
func TestPDPipeline_ContainerDiagnostics(t *testing.T) {
	block := func(set map[string]tftypes.Value) tftypes.Value { return attrObject(t, "container", set) }
	for _, c := range []struct {
		set  map[string]tftypes.Value
		code string
		at   string
	}{
		{map[string]tftypes.Value{"container": block(map[string]tftypes.Value{"image": tfStr("vllm/vllm-omni:v0.22.0")})}, "container_image_release", "container.image"},
		{map[string]tftypes.Value{"container": block(map[string]tftypes.Value{"image": tfStr("vllm/vllm-omni:latest")})}, "container_image_unpinned", "container.image"},
		{map[string]tftypes.Value{"container": block(nil), "systemd": attrObject(t, "systemd", map[string]tftypes.Value{"user": tfStr("omni")})}, "container_setting_unused", "systemd.user"},
	} {
		errs, warnings := planCodes(t, seedWith(c.set))
		if len(errs) > 0 || warnings[c.code] != c.at {
			t.Errorf("%s: errors %v, warnings %v; want %s at %s", c.code, errs, warnings, c.code, c.at)
		}
	}
	errs, _ := planCodes(t, seedWith(map[string]tftypes.Value{
		"container": block(map[string]tftypes.Value{"runtime": tfStr("podman"), "gpus": tfStr("nvidia_runtime")}),
		"decode":    attrObject(t, "decode", map[string]tftypes.Value{"tensor_parallel_size": tfNumber(2)}),
	}))
	if errs["container_invalid"] != "container.gpus" || errs["tp_mismatch"] == "" {
		t.Errorf("want container_invalid at container.gpus and tp_mismatch in one plan, got %v", errs)
	}
}

// An image unknown at plan leaves the outputs unknown, with no error, and
// applies to the pipeline the same image gives when known.
func TestAccPDPipelineResource_ContainerImageUnknown(t *testing.T) {
	const knownAddr = "omni_pd_pipeline.known"
	config := `
resource "terraform_data" "image" { input = "docker.io/vllm/vllm-omni:v0.24.0" }

resource "omni_pd_pipeline" "test" {
  model     = "` + seedModel + `"
  container = { image = terraform_data.image.output, runtime = "podman" }
}

resource "omni_pd_pipeline" "known" {
  model     = "` + seedModel + `"
  container = { image = "docker.io/vllm/vllm-omni:v0.24.0", runtime = "podman" }
}
`
	var stateChecks []statecheck.StateCheck
	for _, name := range []string{"id", "config_yaml", "systemd_unit", "launches"} {
		stateChecks = append(stateChecks, statecheck.CompareValuePairs(resAddr, tfjsonpath.New(name), knownAddr, tfjsonpath.New(name), compare.ValuesSame()))
	}
	accTest(t, resource.TestStep{
		Config: config,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("id")),
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("launches")),
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("container").AtMapKey("image")),
		}},
		ConfigStateChecks: stateChecks,
	})
}
