/**
 * Test target: the reference store, correct, that answers its records as instances of a
 * class, as ORMs hand out entities: every second answer's records with their columns as own
 * fields (TypeORM, MikroORM), the others with their columns as getters of their class over
 * values it keeps out of sight (Sequelize's models; a class with `#private` fields). Every
 * session, message, obligation and candidate it answers. The cells must read them as the
 * records they are.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { respelledAll } from "./_wrapped.ts";
import { crashPoints as referencePoints } from "../reference_target.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** A row as an entity: a class of its own, its columns its own fields. */
class Entity {}

/** A row as a model: its columns getters of its table's class, their values out of sight. */
const columns = new WeakMap<object, Record<string, unknown>>();
const models = new Map<string, new () => object>();

function modelOf(fields: Record<string, unknown>): object {
  const table = Object.keys(fields).sort().join();
  let Model = models.get(table);
  if (!Model) {
    Model = class {};
    for (const key of Object.keys(fields)) {
      Object.defineProperty(Model.prototype, key, {
        get(this: object) {
          return columns.get(this)?.[key];
        },
      });
    }
    models.set(table, Model);
  }
  const model = new Model();
  columns.set(model, fields);
  return model;
}

/** `value` with every plain object in it, however deep, as an entity or a model. */
function asInstances(value: unknown, asModel: boolean): unknown {
  if (Array.isArray(value)) return value.map((element) => asInstances(element, asModel));
  if (value === null || typeof value !== "object") return value;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const fields = Object.fromEntries(
    Object.entries(value).map(([key, field]) => [key, asInstances(field, asModel)]),
  );
  return asModel ? modelOf(fields) : Object.assign(new Entity(), fields);
}

/**
 * `store` answering every record as an instance (after a promise, when it answers one):
 * entities and models in turn.
 */
export function withInstances(store: SessionDB): SessionDB {
  let answers = 0;
  return respelledAll(store, (answer) => asInstances(answer, ++answers % 2 === 0));
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return withInstances(openReference(path, options));
}

/** The reference's crash points. */
export function crashPoints(): string[] {
  return referencePoints();
}
