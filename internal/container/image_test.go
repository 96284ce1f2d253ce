package container

import (
	"regexp"
	"strings"
	"testing"
)

const sha = "sha256:6c3c624b58dbbcd3c0dd82b4c53f04194d1247c6eebdaab7c610cf7d66709b3b"

func TestParseImage(t *testing.T) {
	for ref, want := range map[string]Image{
		"vllm/vllm-omni:v0.24.0":                         {Path: "vllm/vllm-omni", Tag: "v0.24.0"},
		"docker.io/vllm/vllm-omni:v0.24.0":               {Domain: "docker.io", Path: "vllm/vllm-omni", Tag: "v0.24.0"},
		"vllm/vllm-omni@" + sha:                          {Path: "vllm/vllm-omni", Digest: sha},
		"vllm/vllm-omni:v0.24.0@" + sha:                  {Path: "vllm/vllm-omni", Tag: "v0.24.0", Digest: sha},
		"localhost/vllm-omni-standin:v0.24.0":            {Domain: "localhost", Path: "vllm-omni-standin", Tag: "v0.24.0"},
		"localhost:5000/a/b":                             {Domain: "localhost:5000", Path: "a/b"},
		"[::1]:5000/a:t":                                 {Domain: "[::1]:5000", Path: "a", Tag: "t"},
		"Vllm/vllm-omni":                                 {Domain: "Vllm", Path: "vllm-omni"},
		"Registry.Example/a":                             {Domain: "Registry.Example", Path: "a"},
		"ubuntu":                                         {Path: "ubuntu"},
		"a__b-----d/e_f.g":                               {Path: "a__b-----d/e_f.g"},
		"public.ecr.aws/q9t5s3a7/vllm-omni:abc-x86_64":   {Domain: "public.ecr.aws", Path: "q9t5s3a7/vllm-omni", Tag: "abc-x86_64"},
		"localhost:5000":                                 {Path: "localhost", Tag: "5000"},
		"x@sha512:" + strings.Repeat("ab", 64):           {Path: "x", Digest: "sha512:" + strings.Repeat("ab", 64)},
		"reg.example:443/team/vllm/vllm-omni:v0.22.0":    {Domain: "reg.example:443", Path: "team/vllm/vllm-omni", Tag: "v0.22.0"},
		"vllm/vllm-omni:_" + strings.Repeat("x", 127):    {Path: "vllm/vllm-omni", Tag: "_" + strings.Repeat("x", 127)},
		"a/" + strings.Repeat("b", nameMaxLength-2) + "": {Path: "a/" + strings.Repeat("b", nameMaxLength-2)},
	} {
		got, err := ParseImage(ref)
		if err != nil || got != want || got.String() != ref {
			t.Errorf("ParseImage(%q) = %+v, %v; want %+v", ref, got, err, want)
		}
	}
	for _, ref := range []string{
		"", ":v1", "@" + sha, "a__b.c/d", "vllm/Vllm-omni", "vllm//x", "/x", "x/", "x:", "x@", "x:-t", "x:.t",
		"x:" + strings.Repeat("t", 129), "x@sha256:" + strings.Repeat("A", 64), "x@sha256:abc", "x@md5:" + strings.Repeat("a", 32),
		"x@sha256", "-x", "x-", "x..y", "a_.b", "reg_x.io/a", "-reg.io/a", "reg.io:port/a", "[::g]/a", "a b", "x:t@" + sha + "@" + sha,
		"a/" + strings.Repeat("b", nameMaxLength-1), "vllm/vllm-omni:v0.24.0\n",
	} {
		if got, err := ParseImage(ref); err == nil {
			t.Errorf("ParseImage(%q) = %+v, want an error", ref, got)
		}
	}
}

func TestImageRelease(t *testing.T) {
	for ref, want := range map[string]string{
		"vllm/vllm-omni:v0.24.0":                        "0.24.0",
		"docker.io/vllm/vllm-omni:v0.22.0":              "0.22.0",
		"vllm/vllm-omni:v0.24.0@" + sha:                 "0.24.0",
		"mirror.example:5000/vllm/vllm-omni:v0.24.0":    "0.24.0",
		"mirror.example/team/vllm/vllm-omni:v0.25.0rc1": "0.25.0rc1",
		"vllm/vllm-omni:v0.24.0.post1":                  "0.24.0.post1",
		"vllm/vllm-omni:cosmos3":                        "",
		"vllm/vllm-omni:latest":                         "",
		"vllm/vllm-omni":                                "",
		"vllm/vllm-omni@" + sha:                         "",
		"vllm/vllm-omni:v0.24":                          "",
		"vllm/vllm-omni:v0.24.0-cu128":                  "",
		"vllm/vllm-openai:v0.24.0":                      "",
		"myvllm/vllm-omni:v0.24.0":                      "",
		"x/myvllm/vllm-omni:v0.24.0":                    "",
		"vllm/vllm-omni:V0.24.0":                        "",
		"Vllm/vllm-omni:v0.24.0":                        "",
	} {
		got, ok := ImageRelease(ref)
		if got != want || ok != (want != "") {
			t.Errorf("ImageRelease(%q) = %q, %v; want %q", ref, got, ok, want)
		}
	}
	if got, ok := ImageRelease(DefaultImage("0.24.0")); !ok || got != "0.24.0" {
		t.Errorf("the default image names %q, %v", got, ok)
	}
}

// The reference grammar, written out again as one expression
// (github.com/distribution/reference, reference.go's grammar comment):
// the fuzz target's independent reading.
var (
	oracleDomainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	oracleDomain          = `(?:` + oracleDomainComponent + `(?:\.` + oracleDomainComponent + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
	oracleComponent       = `[a-z0-9]+(?:(?:[_.]|__|[-]*)[a-z0-9]+)*`
	oracleReference       = regexp.MustCompile(`^((?:` + oracleDomain + `/)?` + oracleComponent + `(?:/` + oracleComponent + `)*)` +
		`(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`)
	oracleDomainOnly = regexp.MustCompile(`^` + oracleDomain + `$`)
	oraclePath       = regexp.MustCompile(`^` + oracleComponent + `(?:/` + oracleComponent + `)*$`)
)

// oracleTakes is whether the runtimes take ref, by the grammar and the
// rules beside it: a first component that holds "." or ":" or a capital,
// or is localhost, is a registry and must be one, and any other is a
// path component (docker's normalization, splitDockerDomain); the name is at most
// 255 characters; a digest is sha256, sha384 or sha512 in lowercase hex
// of its length.
func oracleTakes(ref string) bool {
	m := oracleReference.FindStringSubmatch(ref)
	if m == nil || len(m[1]) > nameMaxLength {
		return false
	}
	first, _, ok := strings.Cut(m[1], "/")
	switch registry := ok && (strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first); {
	case registry && !oracleDomainOnly.MatchString(first):
		return false
	case !registry && !oraclePath.MatchString(m[1]):
		return false
	}
	if m[3] != "" {
		algorithm, hex, _ := strings.Cut(m[3], ":")
		n := map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}[algorithm]
		if len(hex) != n || strings.ToLower(hex) != hex {
			return false
		}
	}
	return true
}

// ParseImage takes exactly what the grammar does, and what it takes it
// writes back as it was.
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{"vllm/vllm-omni:v0.24.0", "docker.io/vllm/vllm-omni:v0.24.0@" + sha, "localhost:5000/a/b:c",
		"[::1]:5000/a", "Reg.Example/a__b", "a-.b", "x@sha512:" + strings.Repeat("0", 128), "a:b:c", "a/b@c:d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		img, err := ParseImage(ref)
		if (err == nil) != oracleTakes(ref) {
			t.Fatalf("ParseImage(%q): %v; the grammar takes it: %v", ref, err, oracleTakes(ref))
		}
		if err != nil {
			return
		}
		if img.String() != ref {
			t.Fatalf("ParseImage(%q) writes back %q", ref, img.String())
		}
		if again, err := ParseImage(img.String()); err != nil || again != img {
			t.Fatalf("%q reads back as %+v, %v", ref, again, err)
		}
		if release, ok := ImageRelease(ref); ok && !strings.HasSuffix(img.Tag, release) {
			t.Fatalf("%q names release %q, not in its tag %q", ref, release, img.Tag)
		}
	})
}
