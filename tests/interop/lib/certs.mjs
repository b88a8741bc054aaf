// Test certificates made with the openssl CLI in a temp dir (no private key
// is committed): a CA, leaves it signs, and strangers from another CA.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class CertDir {
  constructor(prefix) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  }

  file(name) {
    return path.join(this.dir, name);
  }

  read(name) {
    return fs.readFileSync(this.file(name));
  }

  #openssl(...args) {
    execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  }

  /** A self-signed CA: NAME.crt, NAME.key. */
  ca(name) {
    this.#openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`);
  }

  /** A leaf `name` signed by `ca` with common name `cn` and extensions `ext` (openssl extfile text). */
  leaf(name, ca, cn, ext) {
    fs.writeFileSync(this.file(`${name}.ext`), ext);
    this.#openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    this.#openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`,
      '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
  }

  remove() {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export const SERVER_EXT = 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n';
export const CLIENT_EXT = 'extendedKeyUsage=clientAuth\n';
