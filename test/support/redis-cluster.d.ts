// Types of redis-cluster.js (plain JavaScript so the benchmarks can start a cluster too).

/** One node of the cluster. */
export interface ClusterNode {
  readonly port: number;
  readonly address: string;
  /** SIGKILL: no shutdown, in-flight replies lost. */
  kill(): Promise<void>;
  /** Starts a killed node again on its port and folder: it rejoins the cluster (as a replica, if it was failed over). */
  restart(): Promise<void>;
  /** SIGSTOP: the node stops answering and replicating, its connections stay open. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
}

/** A running cluster. */
export interface RedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** redis://127.0.0.1:port of every node, for createCluster's rootNodes. */
  readonly urls: readonly string[];
  /** Runs redis-cli against a node (e.g. CLUSTER NODES, or --cluster reshard). */
  cli(args: readonly string[], port?: number): string;
  /** The ports of the masters now, by CLUSTER NODES as a live node sees it. */
  masters(): number[];
  /** The port of the replica of the master on `masterPort`, by CLUSTER NODES. */
  replicaOf(masterPort: number): number;
  /** Waits until every live node reports cluster_state:ok and `check` holds. */
  settle(check?: () => boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts three masters and three replicas on loopback and joins them into one cluster. */
export function startCluster(): Promise<RedisCluster>;

/** A node-redis cluster client on `cluster` that fails fast instead of queueing (the tests kill nodes). */
export function connectCluster(cluster: RedisCluster): Promise<import("redis").RedisClusterType>;
