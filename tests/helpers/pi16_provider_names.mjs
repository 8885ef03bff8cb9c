// Every provider of pi-ai's catalogue, as {id: name}.
import { readdirSync } from "node:fs";
const [, , dir] = process.argv;
const out = {};
for (const file of readdirSync(`${dir}/dist/providers`)) {
  if (!file.endsWith(".js") || file.endsWith(".models.js")) continue;
  const module = await import(`${dir}/dist/providers/${file}`);
  for (const [name, make] of Object.entries(module)) {
    if (!name.endsWith("Provider") || typeof make !== "function") continue;
    const provider = make();
    if (provider && typeof provider.id === "string") out[provider.id] = provider.name;
  }
}
process.stdout.write(JSON.stringify(out));
