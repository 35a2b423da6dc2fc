// Command openapi-libs measures loading one OpenAPI document with
// kin-openapi (its loader, or encoding/json into its types), libopenapi,
// and plain encoding/json, the way docs/openapi.md reports. It is its own
// module so that toolgate depends on neither library.
//
//	go run . kin|kinjson|lib|plain FILE
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/pb33f/libopenapi"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: openapi-libs kin|kinjson|lib|plain FILE")
		os.Exit(2)
	}
	mode, file := os.Args[1], os.Args[2]
	start := time.Now()
	ops, err := load(mode, file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("%s: %d operations in %v; %d MB allocated, %d MB from the OS\n",
		mode, ops, time.Since(start).Round(time.Millisecond), ms.TotalAlloc>>20, ms.Sys>>20)
}

// load reads the document with the library mode names and counts its
// operations.
func load(mode, file string) (int, error) {
	switch mode {
	case "kin":
		return loadKin(file)
	case "kinjson":
		return loadKinJSON(file)
	case "lib":
		return loadLibopenapi(file)
	case "plain":
		return loadPlain(file)
	}
	return 0, fmt.Errorf("unknown mode %q: kin, kinjson, lib or plain", mode)
}

// loadKin reads the document with kin-openapi's loader, external $refs
// allowed.
func loadKin(file string) (int, error) {
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = true
	doc, err := l.LoadFromFile(file)
	if err != nil {
		return 0, err
	}
	ops := 0
	for _, p := range doc.Paths.Map() {
		ops += len(p.Operations())
	}
	return ops, nil
}

// loadKinJSON decodes the document with encoding/json into kin-openapi's
// types, then has kin-openapi resolve its $refs.
func loadKinJSON(file string) (int, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	var doc openapi3.T
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, err
	}
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = true
	if err := l.ResolveRefsIn(&doc, &url.URL{Path: file}); err != nil {
		return 0, err
	}
	ops := 0
	for _, p := range doc.Paths.Map() {
		ops += len(p.Operations())
	}
	return ops, nil
}

// loadLibopenapi reads the document with libopenapi and builds its
// OpenAPI 3 model.
func loadLibopenapi(file string) (int, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	d, err := libopenapi.NewDocument(raw)
	if err != nil {
		return 0, err
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return 0, err
	}
	ops := 0
	for p := m.Model.Paths.PathItems.First(); p != nil; p = p.Next() {
		ops += p.Value().GetOperations().Len()
	}
	return ops, nil
}

// loadPlain decodes the document into plain maps, as toolgate does, and
// counts the methods of each path item.
func loadPlain(file string) (int, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return 0, err
	}
	ops := 0
	paths, _ := m["paths"].(map[string]any)
	for _, p := range paths {
		item, _ := p.(map[string]any)
		for _, k := range []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"} {
			if _, ok := item[k]; ok {
				ops++
			}
		}
	}
	return ops, nil
}
