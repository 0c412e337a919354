// Runs one SQL statement (argv[2]) in an in-memory DuckDB and prints its
// rows as a JSON array of arrays (values as DuckDB's JSON conversion gives
// them: BIGINT and TIMESTAMP as strings). scripts/duckdb.sh runs it.
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const reader = await conn.runAndReadAll(process.argv[2]);
process.stdout.write(JSON.stringify(reader.getRowsJson()));
