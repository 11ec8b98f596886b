// Prints the objects of rendered multi-document YAML files as one JSON array, for
// tests/common/schema_check.py openapi-kinds (scripts/check-deploy.sh).
//   node to-json.mjs RENDERED.yaml... > objects.json
import fs from "node:fs";
import YAML from "yaml";

const objects = [];
for (const file of process.argv.slice(2)) {
  for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))) {
    if (doc.errors.length) {
      console.error(`${file}: YAML: ${doc.errors[0].message}`);
      process.exit(2);
    }
    if (doc.contents !== null) objects.push(doc.toJS());
  }
}
process.stdout.write(JSON.stringify(objects));
