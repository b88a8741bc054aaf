import { $, clear, el } from './dom.js';

// The form built from an input schema: fields for what a form can say
// (strings, numbers, booleans, enums, nested objects); JSON boxes for the rest.

function resolve(schema, root, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 8) return schema;
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/')) {
    let target = root;
    for (const part of schema.$ref.slice(2).split('/')) target = target && target[part];
    return resolve(target, root, depth + 1);
  }
  return schema;
}

function typeOf(schema) {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return 'enum';
  const t = Array.isArray(schema.type) ? schema.type.filter((x) => x !== 'null') : [schema.type];
  return t.length === 1 ? t[0] : undefined;
}

export function buildForm(schema) {
  const root = schema;
  schema = resolve(schema, root);
  if (!schema || typeof schema !== 'object') return null;
  const box = clear($('schema-form'));
  box.append(el('legend', {}, 'Input'));
  const field = buildField(schema, root, 'input', 'input', true, 0);
  if (!field) return null;
  box.append(field.node);
  return field;
}

let fieldSeq = 0;

function buildField(schema, root, name, label, required, depth) {
  schema = resolve(schema, root);
  const type = typeOf(schema);
  const id = `f${++fieldSeq}`;
  const hint = schema && schema.description ? el('small', {}, schema.description) : null;
  const lab = el('label', { for: id }, label + (required ? ' *' : ''));
  if (type === 'object' && schema.properties && depth < 6) {
    const req = new Set(schema.required || []);
    const children = Object.entries(schema.properties).map(([k, s]) =>
      [k, buildField(s, root, k, k, req.has(k), depth + 1)]);
    const set = el('fieldset', {}, el('legend', {}, label), hint,
      children.map(([, f]) => f.node));
    return {
      node: depth === 0 ? el('div', {}, hint, children.map(([, f]) => f.node)) : set,
      read() {
        const out = {};
        for (const [k, f] of children) {
          const v = f.read();
          if (v !== undefined) out[k] = v;
        }
        return Object.keys(out).length || required ? out : undefined;
      },
      write(v) {
        for (const [k, f] of children) f.write(v && typeof v === 'object' ? v[k] : undefined);
      },
    };
  }
  let input;
  let read;
  let write;
  if (type === 'enum') {
    input = el('select', { id, name }, required ? null : el('option', { value: '' }, '–'),
      schema.enum.map((v, i) => el('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v))));
    read = () => (input.value === '' ? undefined : schema.enum[Number(input.value)]);
    write = (v) => {
      const i = schema.enum.findIndex((x) => JSON.stringify(x) === JSON.stringify(v));
      input.value = i < 0 ? '' : String(i);
    };
  } else if (type === 'boolean') {
    input = el('input', { id, name, type: 'checkbox' });
    read = () => input.checked;
    write = (v) => { input.checked = v === true; };
  } else if (type === 'number' || type === 'integer') {
    input = el('input', { id, name, type: 'number', step: type === 'integer' ? '1' : 'any',
      required, min: schema.minimum, max: schema.maximum });
    read = () => {
      if (input.value === '') return undefined;
      const v = Number(input.value);
      if (!Number.isFinite(v)) throw new Error(`${label}: not a number`);
      return v;
    };
    write = (v) => { input.value = typeof v === 'number' ? String(v) : ''; };
  } else if (type === 'string') {
    input = el('input', { id, name, type: 'text', required,
      placeholder: schema.format || schema.pattern || '' });
    read = () => (input.value === '' && !required ? undefined : input.value);
    write = (v) => { input.value = typeof v === 'string' ? v : ''; };
  } else {
    // Arrays, unions, untyped: JSON.
    input = el('textarea', { id, name, rows: 3, spellcheck: 'false', placeholder: 'JSON' });
    read = () => {
      if (input.value.trim() === '') return undefined;
      try { return JSON.parse(input.value); } catch (e) {
        throw new Error(`${label}: not valid JSON (${e.message})`);
      }
    };
    write = (v) => { input.value = v === undefined ? '' : JSON.stringify(v); };
  }
  return { node: el('div', { class: 'field' }, lab, input, hint), read, write };
}

