// `dedup --store` for keyed records (--field, --csv, --json-key, --canonicalize): the disk seen-set
// with the run's file of unprinted lines (unprinted-file.ts), as the byte pipeline's StoreGate
// keeps one. A group's new fingerprints are recorded there before the log has them and leave it
// once the group's lines are printed (printed(): each group is printed before the next is
// committed); a dead run's file is found under the store's lock and its fingerprints forgotten
// in the same batch, so their lines are new again; at close what this run did not print is
// forgotten too. So kill -9 between a commit and its print loses no line.
import { join } from "node:path";
import { LOG_FILE, openDiskSeenSet } from "../seen/disk/disk-seen-set.js";
import { deadRunMessage, deadRuns, UnprintedFile, type DeadRun } from "../seen/disk/unprinted-file.js";
import type { PersistedSeenSet } from "../seen/persisted-seen-set.js";

/** A keyed run's store: group adds with their unprinted lines kept, printed() after each print. */
export interface KeyedStore {
  readonly set: PersistedSeenSet;
  /** Adds a group's packed fingerprints (one batch); 1 where new. */
  add(packed: Uint8Array): Promise<Uint8Array>;
  /** Everything added so far is printed. */
  printed(): void;
  /** Lines of killed runs found new again. */
  readonly forgottenForDead: number;
  /** Forgets what was added and not printed, then closes the set. */
  close(): Promise<void>;
}

/** Opens the store in `dir` for a keyed run; `told` hears what it recovered from. */
export async function openKeyedStore(dir: string, items: number | undefined, told: (message: string) => void): Promise<KeyedStore> {
  const set = await openDiskSeenSet(dir, { items, onRecover: told });
  let unprinted: UnprintedFile;
  try {
    unprinted = UnprintedFile.create(dir, true, join(dir, LOG_FILE));
  } catch (error) {
    await set.close();
    throw error;
  }
  let forgottenForDead = 0;
  let pending: DeadRun[] = [];
  const release = () => {
    pending.forEach((run) => run.release());
    pending = [];
  };
  return {
    set,
    get forgottenForDead() {
      return forgottenForDead;
    },
    add: (packed) =>
      set
        .addFingerprintsTracked(packed, {
          forget: () => {
            pending = deadRuns(dir, unprinted.path);
            return pending.flatMap((run) => run.batches);
          },
          recorded: (fresh) => {
            unprinted.record(fresh, true);
            unprinted.flush();
          },
          written: () => {
            for (const run of pending) {
              run.take();
              if (run.lines === 0) continue;
              forgottenForDead += run.lines;
              told(deadRunMessage(run));
            }
            pending = [];
          },
        })
        .catch((error) => {
          release();
          throw error;
        }),
    printed: () => unprinted.printed(Infinity),
    close: async () => {
      try {
        const dead = deadRuns(dir, unprinted.path);
        try {
          await set.forgetFingerprints([...unprinted.unprinted(), ...dead.flatMap((run) => run.batches)]);
        } catch (error) {
          dead.forEach((run) => run.release());
          told(`the lines this run recorded and did not print could not be forgotten in the store ${dir} (${(error as Error).message}); the next run forgets them`);
          return;
        }
        dead.forEach((run) => run.take());
        unprinted.close();
      } finally {
        await set.close();
      }
    },
  };
}
