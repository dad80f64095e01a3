//go:build linux

package main

import (
	"context"
	"errors"
)

func runGrowth(ctx context.Context, args []string) error { return errors.New("not yet") }
