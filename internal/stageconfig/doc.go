// Package stageconfig reads and writes vllm-omni stage configs in both of
// their dialects without losing anything a user wrote.
//
// A config is kept as a yaml.v3 node tree rather than decoded into structs:
// the node tree carries key order, comments, quoting and flow style, so a
// document that is parsed, edited in a few places and rendered again differs
// from its input only where it was edited. Views such as Stage read and write
// through the tree and never hold a copy of the data.
package stageconfig
