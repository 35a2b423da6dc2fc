// Package openapi turns the operations of an OpenAPI 3.0 or 3.1 document
// into tools (docs/openapi.md): one config.ImportedTool per
// operation, whose input schema gathers the path, query and header
// parameters and the JSON request body, and whose request says where each
// argument goes (config.Param), so that the HTTP executor places arguments
// by the document and never by name or method.
//
// The document is read with encoding/json (or goccy/go-yaml for YAML) into
// plain values and its $refs are resolved here, within the document and
// into other files or URLs, relative to the document that holds them. Both
// kin-openapi and libopenapi were measured on GitHub's REST API
// description (13 MB, 1,223 operations) and each missed one of the import
// budget's two limits (2 s, 200 MB): kin-openapi's JSON path took about
// 2.8 s of CPU (its YAML path 630 MB), libopenapi 280 MB. Reading plain
// values takes a fraction of both, and the conversion to JSON Schema is
// written against plain maps either way (see docs/openapi.md).
//
// Operations that cannot become a tool are skipped with a reason (a
// request body that is not JSON, a required cookie parameter, a method
// toolgate does not send); the Report of each document lists them, the
// name collisions, and how many operations were imported.
package openapi
