import { loadConfig } from '../config';
import { connectDatabase } from './database';
import { migrate } from './migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required for npm run migrate');
  const db = connectDatabase(config.DATABASE_URL);
  const applied = await migrate(db.sequelize);
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Schema is up to date.');
  await db.close();
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
