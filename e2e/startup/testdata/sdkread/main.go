// sdkread is the yardstick of the start-up benchmark: the smallest program that reads one
// item with the official Azure Cosmos DB Go SDK (azcosmos), configured as cosmosctl is,
// from COSMOSCTL_ENDPOINT, COSMOSCTL_KEY, COSMOSCTL_DATABASE and COSMOSCTL_CONTAINER.
//
//	sdkread ID PARTITION-KEY
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sdkread:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: sdkread ID PARTITION-KEY")
	}
	cred, err := azcosmos.NewKeyCredential(os.Getenv("COSMOSCTL_KEY"))
	if err != nil {
		return err
	}
	client, err := azcosmos.NewClientWithKey(os.Getenv("COSMOSCTL_ENDPOINT"), cred, nil)
	if err != nil {
		return err
	}
	defer client.Close()
	container, err := client.NewContainer(os.Getenv("COSMOSCTL_DATABASE"), os.Getenv("COSMOSCTL_CONTAINER"))
	if err != nil {
		return err
	}
	resp, err := container.ReadItem(context.Background(), azcosmos.NewPartitionKeyString(args[1]), args[0], nil)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(resp.Value, '\n'))
	return err
}
