//go:build windows

package cmd

import (
	"os"
	"strconv"
	"syscall"
)

var procGetConsoleWindow = syscall.NewLazyDLL("kernel32.dll").NewProc("GetConsoleWindow")

// platformTerminalSession is the Windows Terminal tab (WT_SESSION, a GUID per tab), or
// else the console window this process is attached to.
func platformTerminalSession() (string, bool) {
	if wt := os.Getenv("WT_SESSION"); wt != "" {
		return "wt " + wt, true
	}
	if procGetConsoleWindow.Find() != nil {
		return "", false
	}
	hwnd, _, _ := procGetConsoleWindow.Call()
	if hwnd == 0 {
		return "", false
	}
	return "console " + strconv.FormatUint(uint64(hwnd), 16), true
}
