package stageconfig

// Translation says what TranslateKey did with a key.
type Translation int

// What TranslateKey can do.
const (
	// NotSet: the stage does not set the key.
	NotSet Translation = iota
	// TargetKept: the stage also sets the key it should have used, which
	// wins; the other key is removed.
	TargetKept
	// Renamed: the key is renamed in place, its value rewritten.
	Renamed
	// Moved: the value moved to the engine setting of the target's last
	// key, with the comments written on the old key.
	Moved
)

// TranslateKey moves what the stage sets under the path from to the path
// to: a stage-level key to another (renamed in place, with rewrite applied
// to its text), or any other path to an engine setting (to ends in the
// setting's key). When the stage already sets to, that wins and from is
// removed; a null there is replaced. before and after are the value's text
// before and after.
func (s Stage) TranslateKey(from, to []string, rewrite func(string) string) (what Translation, before, after string) {
	val := pathGet(s.node, from...)
	if val == nil {
		return NotSet, "", ""
	}
	before, _ = scalarString(val)
	target := pathGet(s.node, to...)
	if isSet(target) {
		pathDelete(s.node, from...)
		return TargetKept, before, ""
	}
	if target != nil {
		pathDelete(s.node, to...) // null: the value moves in
	}
	if len(from) == 1 && len(to) == 1 {
		mapRename(s.node, from[0], to[0])
		setScalarText(val, rewrite(before))
		after, _ = scalarString(val)
		return Renamed, before, after
	}
	key := pathKey(s.node, from...)
	pathDelete(s.node, from...)
	s.setEngine(to[len(to)-1], val)
	if moved := pathKey(s.node, to...); moved != nil && key != nil {
		moved.HeadComment, moved.LineComment, moved.FootComment = key.HeadComment, key.LineComment, key.FootComment
	}
	return Moved, before, ""
}
