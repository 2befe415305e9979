// The Redis entry (`crawlsieve/redis`): structures shared by many processes through one Redis.
// Async throughout; node-redis is an optional peer dependency (any client fits RedisCommander).
/**
 * `crawlsieve/redis`: structures shared by many processes through one Redis or a Redis Cluster.
 * @module crawlsieve/redis
 */
export {
  fromNodeRedis,
  fromSend,
  RedisReplyError,
  type RedisCommander,
  type RedisSend,
  type SendOptions,
} from "./commander.js";
export { fromNodeRedisCluster, type NodeRedisClusterLike, type NodeRedisClusterNode } from "./cluster-commander.js";
export type { NodeRedisLike } from "./commander.js";
export type { Durability } from "./durability.js";
export { keyPrefix, keySlot } from "./keys.js";
export { RedisBloomFilter, type RedisBloomFilterOptions } from "./redis-bloom-filter.js";
export { RedisBlockedBloomFilter, type RedisBlockedBloomFilterOptions } from "./redis-blocked-bloom-filter.js";
export { RedisUnavailableError } from "../errors.js";
export { RedisTimeWindowFilter, type RedisTimeWindowFilterOptions } from "./redis-time-window-filter.js";
export { RedisDeduplicator, type RedisDeduplicatorOptions } from "./redis-deduplicator.js";
export { RedisWindowedSeenSet, type RedisWindowedSeenSetOptions } from "./redis-windowed-set.js";
export type { Ttl, TtlMap, WindowSemantics } from "../window/ttl-rules.js";
export { RedisMinHashIndex, type RedisMinHashIndexOptions, type RedisMinHashMatch } from "./redis-minhash-index.js";
export { ScrapyRedisDupeFilter, ScrapyRedisBloomFilter, type ScrapyRedisOptions } from "./scrapy-redis.js";
export { RedisCountingBloomFilter, type RedisCountingBloomFilterOptions } from "./redis-counting-bloom-filter.js";
export { withRecentCache } from "../exact/recent-cache.js";
export { RedisNearDupFilter, type RedisNearDupFilterOptions } from "./redis-near-dup-filter.js";
