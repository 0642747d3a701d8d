package main

import (
	"os"

	"github.com/cosmosctl/cosmosctl/cmd"
)

func main() { os.Exit(cmd.Execute()) }
