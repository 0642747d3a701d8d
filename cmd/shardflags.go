package cmd

import "github.com/cosmosctl/cosmosctl/shard"

// shardRULimit is the RU/s cap one shard keeps to: perShard when it is given
// (--max-ru-per-second-per-shard), else the total (--max-ru-per-second) divided by the
// shard count, so that N shards started with the same flags together spend no more
// than the total the user gave; without a shard, the total. 0 is no cap. The shards do
// not talk to each other: the division is the whole coordination, and a shard that
// finishes early leaves its share unspent.
func shardRULimit(total, perShard float64, spec shard.Spec) float64 {
	switch {
	case spec.Count < 1:
		return total
	case perShard > 0:
		return perShard
	}
	return total / float64(spec.Count)
}

// shardRUHelp is the help of --max-ru-per-second-per-shard, the same on every command
// that takes --shard.
const shardRUHelp = "with --shard: spend at most this many RU/s in this shard, instead of --max-ru-per-second divided by the shard count"
