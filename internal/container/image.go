package container

import (
	"fmt"
	"regexp"
	"strings"
)

// Image is an image reference, [domain/]path[:tag][@digest], in the
// grammar both runtimes parse (the distribution project's reference
// grammar, github.com/distribution/reference, reference.go: name
// components, tag and digest).
type Image struct {
	// Domain is the registry, with its port; "" when the reference names
	// none and the runtime picks one.
	Domain string
	// Path is the repository path: lowercase components joined by "/".
	Path   string
	Tag    string
	Digest string // algorithm:hex
}

// String is the reference as written.
func (i Image) String() string {
	s := i.Path
	if i.Domain != "" {
		s = i.Domain + "/" + s
	}
	if i.Tag != "" {
		s += ":" + i.Tag
	}
	if i.Digest != "" {
		s += "@" + i.Digest
	}
	return s
}

// The reference grammar's pieces.
var (
	// A path component: lowercase letters and digits, separated by one
	// ".", one "_", two "_" or any number of "-".
	pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	// A domain: dot-separated labels of letters, digits and inner "-",
	// or a bracketed IPv6 address, then an optional port.
	domainName = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$`)
	tagPattern = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	// A digest's algorithm: components of a letter then letters or
	// digits, separated by one of "+.-_".
	digestAlgorithm = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[+.\-_][A-Za-z][A-Za-z0-9]*)*$`)
)

// digestHexLength are the digest algorithms the runtimes verify, with
// the length of their lowercase hex encodings (github.com/opencontainers/
// go-digest, algorithm.go): a reference with another is refused when
// the runtime parses it.
var digestHexLength = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// nameMaxLength bounds domain/path together (distribution's
// NameTotalLengthMax).
const nameMaxLength = 255

// ParseImage reads an image reference, or says what is wrong with it.
func ParseImage(ref string) (Image, error) {
	var img Image
	name := ref
	if at := strings.IndexByte(ref, '@'); at >= 0 {
		name, img.Digest = ref[:at], ref[at+1:]
		if err := checkDigest(img.Digest); err != nil {
			return Image{}, err
		}
	}
	if colon := strings.LastIndexByte(name, ':'); colon > strings.LastIndexByte(name, '/') {
		name, img.Tag = name[:colon], name[colon+1:]
		if !tagPattern.MatchString(img.Tag) {
			return Image{}, fmt.Errorf("the tag %q is not 1 to 128 letters, digits, _, . and -, starting with a letter, a digit or _", img.Tag)
		}
	}
	switch {
	case name == "":
		return Image{}, fmt.Errorf("%q names no repository", ref)
	case len(name) > nameMaxLength:
		return Image{}, fmt.Errorf("the repository name is %d characters long, more than %d", len(name), nameMaxLength)
	}
	img.Path = name
	// The first component is a registry when it could not be a path
	// component (it holds "." or ":", or a capital) or is localhost, as
	// both runtimes read it.
	if first, rest, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost" || first != strings.ToLower(first)) {
		if !domainName.MatchString(first) {
			return Image{}, fmt.Errorf("the registry %q is not a host name or [IPv6 address] with an optional :port", first)
		}
		img.Domain, img.Path = first, rest
	}
	for _, c := range strings.Split(img.Path, "/") {
		if !pathComponent.MatchString(c) {
			return Image{}, fmt.Errorf("the repository path component %q is not lowercase letters and digits separated by ., _, __ or dashes", c)
		}
	}
	return img, nil
}

// checkDigest checks algorithm:hex.
func checkDigest(d string) error {
	algorithm, hex, ok := strings.Cut(d, ":")
	if !ok || !digestAlgorithm.MatchString(algorithm) {
		return fmt.Errorf("the digest %q is not algorithm:hex", d)
	}
	n, known := digestHexLength[algorithm]
	if !known {
		return fmt.Errorf("the digest algorithm %q is not one the runtimes verify (sha256, sha384, sha512)", algorithm)
	}
	if len(hex) != n || strings.Trim(hex, "0123456789abcdef") != "" {
		return fmt.Errorf("a %s digest is %d lowercase hex digits, not %q", algorithm, n, hex)
	}
	return nil
}

// officialRepository is the path of vllm-omni's images on Docker Hub;
// a mirror that keeps the path keeps its tags too.
const officialRepository = "vllm/vllm-omni"

// DefaultImage is the official image of a release, with its registry
// named: podman resolves a short name only through an alias or the
// machine's unqualified-search registries, which Debian 12's
// /etc/containers/registries.conf leaves empty (podman 4.3.1 refuses
// vllm/vllm-omni:v0.24.0: "short-name ... did not resolve to an alias and
// no unqualified-search registries are defined"), and Docker reads
// docker.io/vllm/... as it reads vllm/....
func DefaultImage(release string) string {
	return "docker.io/" + officialRepository + ":v" + release
}

// releaseTag is a tag that names a vllm-omni release: v, then the
// version as the release table writes it, with a pre- or post-release
// suffix.
var releaseTag = regexp.MustCompile(`^v([0-9]+\.[0-9]+\.[0-9]+(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?)$`)

// ImageRelease is the vllm-omni release an image's tag names: the version
// in a vX.Y.Z tag of vllm/vllm-omni, on Docker Hub or a mirror that keeps
// the path (registry.example/vllm/vllm-omni). ok is false for another
// repository, a reference without a tag, or a tag that names no release
// (latest, a model's own tag).
func ImageRelease(ref string) (release string, ok bool) {
	img, err := ParseImage(ref)
	if err != nil || (img.Path != officialRepository && !strings.HasSuffix(img.Path, "/"+officialRepository)) {
		return "", false
	}
	m := releaseTag.FindStringSubmatch(img.Tag)
	if m == nil {
		return "", false
	}
	return m[1], true
}
