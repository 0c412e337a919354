// Runs SQL statements (one per argument) in one in-memory DuckDB and prints
// their rows as a JSON array with, per statement, an array of row arrays
// (values as DuckDB's JSON conversion gives them: BIGINT and TIMESTAMP as
// strings). scripts/duckdb.sh runs it.
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const results = [];
for (const sql of process.argv.slice(2)) {
  const reader = await conn.runAndReadAll(sql);
  results.push(reader.getRowsJson());
}
process.stdout.write(JSON.stringify(results));
