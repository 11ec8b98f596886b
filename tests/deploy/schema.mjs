// Validates one Kubernetes object against its API schema (kubernetes-models; the Prometheus
// Operator's CRDs from @kubernetes-models/prometheus-operator) and reports unknown fields too,
// as `kubectl apply --validate=strict` would: the generated validators accept extra properties,
// so every object is read through a Proxy that records which keys the validator looked at; a key
// it never read is not in the schema (maps such as labels are read key by key).

const modules = {
  v1: "kubernetes-models/v1",
  "apps/v1": "kubernetes-models/apps/v1",
  "batch/v1": "kubernetes-models/batch/v1",
  "rbac.authorization.k8s.io/v1": "kubernetes-models/rbac.authorization.k8s.io/v1",
  "admissionregistration.k8s.io/v1": "kubernetes-models/admissionregistration.k8s.io/v1",
  "networking.k8s.io/v1": "kubernetes-models/networking.k8s.io/v1",
  "monitoring.coreos.com/v1": "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1",
};

async function modelClass(apiVersion, kind) {
  const path = modules[apiVersion];
  if (!path) return undefined;
  const mod = await import(path);
  return mod[kind];
}

function track(value, path, reads, objects) {
  if (value === null || typeof value !== "object") return value;
  const read = new Set();
  reads.set(path, read);
  objects.set(path, value);
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key === "string") read.add(key);
      const child = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || !Object.hasOwn(target, key)) return child;
      return track(child, `${path}/${key}`, reads, objects);
    },
    has(target, key) {
      if (typeof key === "string") read.add(key);
      return Reflect.has(target, key);
    },
  });
}

function unknownFields(reads, objects) {
  const unknown = [];
  for (const [path, object] of objects) {
    if (Array.isArray(object)) continue;
    const read = reads.get(path);
    for (const key of Object.keys(object)) {
      if (!read.has(key)) unknown.push(`${path}/${key}`);
    }
  }
  return unknown;
}

// Returns a list of problems (empty when the object is valid).
export async function validateObject(object) {
  const { apiVersion, kind } = object ?? {};
  const Model = await modelClass(apiVersion, kind);
  if (!Model) return [`no schema for ${apiVersion} ${kind} (not a kind this deployment uses)`];
  const reads = new Map();
  const objects = new Map();
  try {
    Model.prototype.validate.call(track(object, "", reads, objects));
  } catch (error) {
    return [`schema: ${error.message}`];
  }
  return unknownFields(reads, objects).map((field) => `unknown field ${field}`);
}
