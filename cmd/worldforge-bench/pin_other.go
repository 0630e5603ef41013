//go:build !linux

package main

import "errors"

func pinSelf([]int) error { return errors.New("pinning CPUs is supported on Linux only") }

func niceSelf(int) error { return errors.New("-nice is supported on Linux only") }

func niceAutogroup(int) (func(), error) { return func() {}, nil }
