package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/cosmosctl/cosmosctl/cmd"
)

// The JSON schemas of docs/json/ are generated from the Go types each command writes
// (cmd.JSONOutputs), so that a schema cannot say something the command does not do:
// cmd/jsonschema_test.go holds every command's real output to its schema.
//
// The rules of cosmosctl's JSON vocabulary (docs/json/README.md) are what make the
// schemas strict: every field is always there (required; optional only where the Go
// field says omitempty), no field is there that the type does not have
// (additionalProperties false), and a field may be null exactly where its Go type is a
// pointer, an interface or raw JSON.

// schemaBase is where the schemas are published: their $id is this and the file name.
const schemaBase = "https://github.com/cosmosctl/cosmosctl/blob/main/docs/json/"

func writeSchemas(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{"README.md": true}
	for _, out := range cmd.JSONOutputs() {
		s, err := schemaOf(out)
		if err != nil {
			return fmt.Errorf("%s: %w", out.Name, err)
		}
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", out.Name, err)
		}
		name := out.Name + ".schema.json"
		keep[name] = true
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	// A schema of a command that no longer prints JSON goes with it.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !keep[e.Name()] && strings.HasSuffix(e.Name(), ".schema.json") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaOf is one output's schema: the type's, or for NDJSON what one line may be.
func schemaOf(out cmd.JSONOutput) (*jsonschema.Schema, error) {
	r := newReflector()
	defs := jsonschema.Definitions{}
	var roots []*jsonschema.Schema
	for _, v := range out.Values {
		s := r.ReflectFromType(reflect.TypeOf(v))
		for name, d := range s.Definitions {
			defs[name] = d
		}
		s.Definitions = nil
		s.Version, s.ID = "", ""
		roots = append(roots, s)
	}
	var root *jsonschema.Schema
	if len(roots) == 1 {
		root = roots[0]
	} else {
		root = &jsonschema.Schema{OneOf: roots}
	}
	root.Version = jsonschema.Version
	root.ID = jsonschema.ID(schemaBase + out.Name + ".schema.json")
	root.Title = out.Command
	root.Description = out.Description
	if out.Lines {
		root.Description += " Each line of the output is one JSON value valid against this schema."
	}
	if out.Stderr {
		root.Description += " Written to stderr, stdout being the data."
	}
	if len(defs) > 0 {
		root.Definitions = defs
	}
	if err := nullable(root, defs, out.Values); err != nil {
		return nil, err
	}
	return root, nil
}

var (
	rawMessageType = reflect.TypeOf(json.RawMessage{})
	timeType       = reflect.TypeOf(time.Time{})
)

func newReflector() *jsonschema.Reflector {
	r := &jsonschema.Reflector{
		Anonymous: true,
		// Definitions are named by package and type: two packages may well have a
		// type of the same name.
		Namer: typeName,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == rawMessageType {
				// An item, or the partition key, exactly as the service sent it.
				return &jsonschema.Schema{Description: "any JSON value, as the service sent it"}
			}
			return nil
		},
	}
	// Field descriptions are the Go comments of the fields.
	if err := r.AddGoComments("github.com/cosmosctl/cosmosctl", "./"); err != nil {
		fmt.Fprintln(os.Stderr, "gen: no field descriptions:", err)
	}
	// A wire type embeds its record's fields through a defined type without methods
	// (type attemptFields Attempt): the fields' comments are the record's.
	for alias, of := range fieldsOf {
		for k, v := range r.CommentMap {
			if rest, ok := strings.CutPrefix(k, of+"."); ok {
				r.CommentMap[alias+"."+rest] = v
			}
		}
	}
	return r
}

// fieldsOf are the wire types' embedded field sets and the records they are defined as.
var fieldsOf = map[string]string{
	"github.com/cosmosctl/cosmosctl/engine.attemptFields":         "github.com/cosmosctl/cosmosctl/engine.Attempt",
	"github.com/cosmosctl/cosmosctl/engine.diagnosticsFields":     "github.com/cosmosctl/cosmosctl/engine.Diagnostics",
	"github.com/cosmosctl/cosmosctl/engine.regionInfoFields":      "github.com/cosmosctl/cosmosctl/engine.RegionInfo",
	"github.com/cosmosctl/cosmosctl/output.queryPageFields":       "github.com/cosmosctl/cosmosctl/output.QueryPage",
	"github.com/cosmosctl/cosmosctl/hedgetest.writeSummaryFields": "github.com/cosmosctl/cosmosctl/hedgetest.WriteSummary",
}

func typeName(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		return t.Name()
	}
	return path.Base(t.PkgPath()) + "." + t.Name()
}

// nullable lets the properties whose Go type is a pointer, an interface or raw JSON be
// null too: invopop/jsonschema describes what a pointer points to, while encoding/json
// writes a nil one as null, and cosmosctl's vocabulary uses null for what does not
// exist. It walks the Go types beside the definitions they were reflected into.
func nullable(root *jsonschema.Schema, defs jsonschema.Definitions, values []any) error {
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type) error
	visit = func(t reflect.Type) error {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			if t == rawMessageType {
				return nil
			}
			t = t.Elem()
		}
		if alias, ok := reflect.New(t).Interface().(interface{ JSONSchemaAlias() any }); ok {
			t = reflect.TypeOf(alias.JSONSchemaAlias())
		}
		if t.Kind() != reflect.Struct || t == timeType || seen[t] {
			return nil
		}
		seen[t] = true
		def := defs[typeName(t)]
		if def == nil && len(values) > 0 && reflect.TypeOf(values[0]) == t {
			def = root
		}
		for _, f := range jsonFields(t) {
			if def != nil && def.Properties != nil {
				if p, ok := def.Properties.Get(f.name); ok && nullableType(f.typ) && !allowsNull(p) {
					def.Properties.Set(f.name, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{p, {Type: "null"}}})
				}
			}
			if err := visit(f.typ); err != nil {
				return err
			}
		}
		return nil
	}
	for _, v := range values {
		t := reflect.TypeOf(v)
		// The root of a single-type schema is the type itself (ExpandedStruct is off:
		// it is a $ref to its definition), so every struct has its definition.
		if err := visit(t); err != nil {
			return err
		}
	}
	return nil
}

func nullableType(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface || t == rawMessageType
}

func allowsNull(s *jsonschema.Schema) bool {
	if s.Type == "null" {
		return true
	}
	for _, o := range append(append([]*jsonschema.Schema{}, s.OneOf...), s.AnyOf...) {
		if o.Type == "null" {
			return true
		}
	}
	return s.Type == "" && s.Ref == "" && s.Properties == nil && s.Items == nil && len(s.OneOf) == 0 && len(s.AnyOf) == 0
}

type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields are the fields encoding/json writes for t: exported, not "-", embedded
// structs' fields promoted, the shallower of two of the same name winning.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	depthOf := map[string]int{}
	index := map[string]int{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, ok := depthOf[name]; ok {
				if d <= depth {
					continue
				}
				depthOf[name] = depth
				out[index[name]].typ = f.Type
				continue
			}
			depthOf[name], index[name] = depth, len(out)
			out = append(out, jsonField{name, f.Type})
		}
	}
	walk(t, 0)
	return out
}
