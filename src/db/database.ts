/**
 * The data layer's entry point: one Sequelize connection with its models. The rest of the code
 * receives a Database object (no module-level singleton), so tests can run several side by side.
 */
import { Sequelize, type Model } from 'sequelize';
import { defineModels, type Models } from './models';

export interface Database {
  sequelize: Sequelize;
  models: Models;
  close(): Promise<void>;
}

export function connectDatabase(url: string, options: { poolMax?: number } = {}): Database {
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    logging: false,
    pool: { max: options.poolMax ?? 10, min: 0, idle: 10_000 },
  });
  return { sequelize, models: defineModels(sequelize), close: () => sequelize.close() };
}

/** Plain attribute objects for the rest of the code, which never sees Sequelize models. */
export function plain<T extends object>(row: Model<T, any>): T;
export function plain<T extends object>(row: Model<T, any> | null): T | null;
export function plain<T extends object>(row: Model<T, any> | null): T | null {
  return row ? (row.get({ plain: true }) as T) : null;
}

export function plainAll<T extends object>(rows: Array<Model<T, any>>): T[] {
  return rows.map((r) => r.get({ plain: true }) as T);
}
