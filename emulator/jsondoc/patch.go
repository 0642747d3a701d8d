package jsondoc

import (
	"slices"
	"strconv"
)

// ApplyPatch applies ops to doc in order. It is all or nothing: the
// operations run on a copy, and doc is overwritten only when every one of
// them succeeded, because Cosmos DB never persists half a patch. On
// success the contents of *doc are replaced wholesale, so pointers into the
// old tree (from Get or Lookup) no longer refer to the document.
//
// protected is asked about every path an operation writes or removes
// (including a move's "from"); returning true rejects the request, which is
// how the caller shields id, the partition key and system properties.
// Every error is a *PatchError.
func ApplyPatch(doc *Value, ops []PatchOp, protected func(path []string) bool) error {
	if doc == nil {
		return patchErrorf("cannot patch a missing document")
	}
	compiled := make([]*compiledOp, len(ops))
	for i, op := range ops {
		c, err := compileOp(op)
		if err != nil {
			return err
		}
		if protected != nil {
			if protected(c.path) {
				return patchErrorf("cannot patch system or identity property ", c.rawPath)
			}
			if c.from != nil && protected(c.from) {
				return patchErrorf("cannot patch system or identity property ", c.rawFrom)
			}
		}
		compiled[i] = c
	}
	work := doc.Clone()
	for _, c := range compiled {
		if err := c.apply(work); err != nil {
			return err
		}
	}
	*doc = *work
	return nil
}

func (c *compiledOp) apply(doc *Value) error {
	switch c.op {
	case "add":
		return c.insert(doc, c.val, c.valDepth, false)
	case "set":
		return c.insert(doc, c.val, c.valDepth, true)
	case "replace":
		slot, err := c.existing(doc, c.path, c.rawPath)
		if err != nil {
			return err
		}
		if err := c.checkDepth(c.valDepth); err != nil {
			return err
		}
		*slot = c.val
		return nil
	case "remove":
		return c.remove(doc, c.path, c.rawPath)
	case "incr":
		return c.incr(doc)
	case "move":
		return c.move(doc)
	}
	// compileOp admits only the operations above.
	panic("jsondoc: unexpected patch operation " + c.op)
}

// parent resolves everything but the last segment of path.
func (c *compiledOp) parent(doc *Value, path []string, raw string) (*Value, string, error) {
	dir := path[:len(path)-1]
	p := doc.Lookup(dir)
	if p == nil {
		return nil, "", patchErrorf(c.op, ": parent ", formatPointer(dir), " of path ", raw, " does not exist")
	}
	if p.Kind != KindObject && p.Kind != KindArray {
		return nil, "", patchErrorf(c.op, ": parent ", formatPointer(dir), " of path ", raw,
			" is a ", p.Kind.String(), ", not an object or array")
	}
	return p, path[len(path)-1], nil
}

// checkDepth keeps patched documents within the limit Parse enforces, so
// that whatever the emulator stores it can read back.
func (c *compiledOp) checkDepth(valDepth int) error {
	if len(c.path)+valDepth > MaxDepth {
		return patchErrorf(c.op, ": the value at ", c.rawPath, " would nest deeper than ",
			strconv.Itoa(MaxDepth), " levels")
	}
	return nil
}

// existing returns the slot holding the value at path, so callers can
// overwrite it without caring whether the parent is an object or an array.
func (c *compiledOp) existing(doc *Value, path []string, raw string) (**Value, error) {
	missing := patchErrorf(c.op, ": path ", raw, " does not exist")
	p, last, err := c.parent(doc, path, raw)
	if err != nil {
		return nil, missing
	}
	if p.Kind == KindObject {
		i := p.index(last)
		if i < 0 {
			return nil, missing
		}
		return &p.Obj[i].Val, nil
	}
	i, ok := parseIndex(last)
	if !ok || i >= len(p.Arr) {
		return nil, missing
	}
	return &p.Arr[i], nil
}

// insert implements add (and set when overwrite is true): an object member
// is created or replaced; an array index inserts before that element, and
// "-" or the array length appends.
func (c *compiledOp) insert(doc, val *Value, valDepth int, overwrite bool) error {
	p, last, err := c.parent(doc, c.path, c.rawPath)
	if err != nil {
		return err
	}
	if err := c.checkDepth(valDepth); err != nil {
		return err
	}
	if p.Kind == KindObject {
		p.Set(last, val)
		return nil
	}
	i, err := c.arrayIndex(p, last, true)
	if err != nil {
		return err
	}
	if overwrite && i < len(p.Arr) {
		p.Arr[i] = val
		return nil
	}
	p.Arr = slices.Insert(p.Arr, i, val)
	return nil
}

// arrayIndex validates an index for a write into array p; appendOK admits
// "-" and len(p.Arr), which address the position after the last element.
func (c *compiledOp) arrayIndex(p *Value, seg string, appendOK bool) (int, error) {
	n := len(p.Arr)
	if seg == "-" && appendOK {
		return n, nil
	}
	i, ok := parseIndex(seg)
	if !ok {
		return 0, patchErrorf(c.op, ": ", strconv.Quote(seg), " in path ", c.rawPath,
			" is not a valid array index")
	}
	if i > n || (i == n && !appendOK) {
		return 0, patchErrorf(c.op, ": array index ", seg, " in path ", c.rawPath,
			" is out of range (array length ", strconv.Itoa(n), ")")
	}
	return i, nil
}

func (c *compiledOp) remove(doc *Value, path []string, raw string) error {
	if _, err := c.existing(doc, path, raw); err != nil {
		return err
	}
	p, last, _ := c.parent(doc, path, raw)
	if p.Kind == KindObject {
		p.Delete(last)
		return nil
	}
	i, _ := parseIndex(last)
	p.Arr = slices.Delete(p.Arr, i, i+1)
	return nil
}

func (c *compiledOp) incr(doc *Value) error {
	p, last, err := c.parent(doc, c.path, c.rawPath)
	if err != nil {
		return err
	}
	var slot **Value
	if p.Kind == KindObject {
		if i := p.index(last); i >= 0 {
			slot = &p.Obj[i].Val
		}
	} else {
		i, err := c.arrayIndex(p, last, true)
		if err != nil {
			return err
		}
		if i < len(p.Arr) {
			slot = &p.Arr[i]
		}
	}
	if slot == nil {
		// Cosmos DB treats a missing counter as zero.
		return c.insert(doc, c.val, 0, false)
	}
	cur := *slot
	if cur == nil || cur.Kind != KindNumber {
		return patchErrorf("incr: path ", c.rawPath, " is not a number")
	}
	sum, ok := addNumbers(cur.Num, c.val.Num)
	if !ok {
		return patchErrorf("incr: the result at ", c.rawPath, " is out of range")
	}
	*slot = Number(string(sum))
	return nil
}

func (c *compiledOp) move(doc *Value) error {
	if len(c.from) < len(c.path) && slices.Equal(c.from, c.path[:len(c.from)]) {
		return patchErrorf("move: cannot move ", c.rawFrom, " into its own child ", c.rawPath)
	}
	v := doc.Lookup(c.from)
	if v == nil {
		return patchErrorf("move: from path ", c.rawFrom, " does not exist")
	}
	if slices.Equal(c.from, c.path) {
		return nil
	}
	if err := c.remove(doc, c.from, c.rawFrom); err != nil {
		return err
	}
	return c.insert(doc, v, depth(v), false)
}
