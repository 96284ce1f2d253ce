//go:build race

package provider

// raceSlowdown widens timing limits under `go test -race`, which slows code
// down several times.
const raceSlowdown = 10
