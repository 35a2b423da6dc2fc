// Package layers holds no code: its test checks, with go list, that the
// stages do not import the packages above them (the pipeline, another
// stage's package, the config file's package), so that such an import, once
// removed, cannot come back unnoticed.
package layers
