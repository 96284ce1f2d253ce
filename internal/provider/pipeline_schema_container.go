package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// The container block: each process in its own container of the
// release's image. Its values are checked where one value suffices
// (validators) and, with the rest of the plan, by the planner
// (container.Check), which reports each problem at its attribute.

// containerAttribute declares the block.
func containerAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Runs each process in its own container of vllm-omni's image instead of a host install, each started and supervised by its systemd unit: the same template and drop-ins, ordering and restart policy, the runtime's client as `ExecStart` (docker in the foreground, stopped through the daemon; podman with `--sdnotify=conmon`, as `podman generate systemd --new` writes a unit). " +
			"Each container gets exactly its process's GPUs (NVIDIA's runtime with `--gpus \"device=N,M\"`, or one CDI device `nvidia.com/gpu=N` each; a process with none gets `NVIDIA_VISIBLE_DEVICES=void`), the machine's network and IPC (`--network host`, `--ipc host`), `--init`, the deploy config and the check script read-only and `systemd.cache_dir` read-write at their own paths (a local `model` read-only too), `HF_HOME` and `HOME` at the cache, `CUDA_DEVICE_ORDER=PCI_BUS_ID`, its stage's environment, and `HF_TOKEN` and `HUGGING_FACE_HUB_TOKEN` by name from `systemd.environment_file` (their values never reach a command line or the state). " +
			"Its preflight runs in the container, against the image's vllm-omni, vLLM and transports and the GPUs the container got, before `vllm`. " +
			"A container numbers its GPUs from 0, so `config_yaml` gives each stage the devices its container sees (host GPUs 2 and 3 are `\"0,1\"`): a different config, and `config_sha256`, from the same plan without `container`. `stages`, `prefill.devices` and the launches keep the host's indices, which the containers ask for. " +
			"The units run the client as root, with no `User=` and no sandbox of their own: the container is confined by the runtime. `systemd.vllm_path` and `systemd.python_path` default to the image's (`" + pipeline.ImageVLLMPath + "`, `" + pipeline.ImagePythonPath + "`). " +
			"Unset: every process runs the machine's own `vllm`.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"image": schema.StringAttribute{
				MarkdownDescription: "The image, `[registry/]repository[:tag][@digest]`. Default: the planned release's official image, `" + container.DefaultImage("<release>") + "`. The plan warns when its tag names another release (`container_image_release`), or when it has no tag but `latest` and no digest (`container_image_unpinned`).",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1), imageReference{}},
			},
			"runtime": schema.StringAttribute{
				MarkdownDescription: "`docker` (the default, as vllm-omni's install guide runs the image) or `podman`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.OneOf(string(container.Docker), string(container.Podman))},
			},
			"runtime_path": schema.StringAttribute{
				MarkdownDescription: "Absolute path of the runtime's client on the machine, the units' executable. Default: `/usr/bin/<runtime>`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"gpus": schema.StringAttribute{
				MarkdownDescription: "How a container asks for its GPUs: `nvidia_runtime` (`--runtime nvidia --gpus \"device=N,M\"`, NVIDIA Container Toolkit with Docker) or `cdi` (`--device nvidia.com/gpu=N`, a CDI spec on the machine, as `nvidia-ctk cdi generate` writes one). Default: `cdi` with podman, which has no other way, `nvidia_runtime` with docker.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.OneOf(string(container.NVIDIARuntime), string(container.CDI))},
			},
			"pull": schema.StringAttribute{
				MarkdownDescription: "When the runtime pulls the image, its `--pull`: `missing` (the default), `always` or `never`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.OneOf(string(container.PullMissing), string(container.PullAlways), string(container.PullNever))},
			},
			"mounts": schema.ListNestedAttribute{
				MarkdownDescription: "More host paths to mount into every container, such as a directory of models. Not at a path the plan mounts itself.",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"source":    schema.StringAttribute{MarkdownDescription: "Absolute path on the machine.", Required: true},
					"target":    schema.StringAttribute{MarkdownDescription: "Absolute path in the container.", Required: true},
					"read_only": schema.BoolAttribute{MarkdownDescription: "Mount it read-only. Default: `false`.", Optional: true},
				}},
			},
			"options": schema.ListAttribute{
				MarkdownDescription: "More words of the run command, before the image, such as `[\"--security-opt\", \"label=disable\"]` or `[\"--device\", \"/dev/infiniband\"]`. Refused: what undoes the plan's settings (`--network`, `--ipc`, `--gpus`, a GPU device, `--privileged`, `--name`, `--rm`, `--restart`, `--pull`, `--init`, a variable or a mount the plan sets, ...), and a word that is no option's.",
				Optional:            true,
				ElementType:         types.StringType,
			},
		},
	}
}

type containerModel struct {
	Image       types.String `tfsdk:"image"`
	Runtime     types.String `tfsdk:"runtime"`
	RuntimePath types.String `tfsdk:"runtime_path"`
	GPUs        types.String `tfsdk:"gpus"`
	Pull        types.String `tfsdk:"pull"`
	Mounts      types.List   `tfsdk:"mounts"`  // of mountModel
	Options     types.List   `tfsdk:"options"` // of string
}

type mountModel struct {
	Source   types.String `tfsdk:"source"`
	Target   types.String `tfsdk:"target"`
	ReadOnly types.Bool   `tfsdk:"read_only"`
}

// containerSpec is the block as the planner takes it; nil when unset.
func containerSpec(ctx context.Context, obj types.Object, diags *diag.Diagnostics) *pipeline.ContainerSpec {
	if obj.IsNull() {
		return nil
	}
	var m containerModel
	if !modelOf(obj, &m, diags) {
		return nil
	}
	c := &pipeline.ContainerSpec{
		Image: m.Image.ValueString(), Runtime: m.Runtime.ValueString(), RuntimePath: m.RuntimePath.ValueString(),
		GPUs: m.GPUs.ValueString(), Pull: m.Pull.ValueString(),
	}
	if !m.Options.IsNull() {
		diags.Append(m.Options.ElementsAs(ctx, &c.Options, false)...)
	}
	for _, e := range m.Mounts.Elements() {
		o, _ := e.(types.Object)
		var mm mountModel
		if !modelOf(o, &mm, diags) {
			break
		}
		c.Mounts = append(c.Mounts, container.Mount{Source: mm.Source.ValueString(), Target: mm.Target.ValueString(), ReadOnly: mm.ReadOnly.ValueBool()})
	}
	return c
}

// imageReference requires an image reference both runtimes parse
// (container.ParseImage).
type imageReference struct{}

func (imageReference) Description(context.Context) string {
	return "value must be an image reference, [registry/]repository[:tag][@digest]"
}

func (v imageReference) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (imageReference) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := container.ParseImage(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value",
			fmt.Sprintf("Attribute %s must be an image reference, [registry/]repository[:tag][@digest]: %v.", req.Path, err))
	}
}
