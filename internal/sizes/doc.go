// Package sizes holds no code: its test checks that no non-test Go file of
// the module is over maxFileLines lines and no function over maxFuncLines,
// so that a file or function, once split, cannot grow back unnoticed.
package sizes
