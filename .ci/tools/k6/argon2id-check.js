// k6 run --vus 1 --iterations 1 .ci/tools/k6/argon2id-check.js  (exit 99 if a check fails). Expected hex from argon2-cffi 25.1.0 hash_secret_raw(Type.ID) and hash-wasm; the first is argon2's reference CLI example.
import { check } from 'k6';
import gatehouse from 'k6/x/gatehouse';
export const options = { thresholds: { checks: ['rate==1'] } };
export default () =>
  check(null, {
    'password/somesalt t=2 m=64MiB p=1': () =>
      gatehouse.argon2id('password', 'somesalt', 2, 65536, 1, 32) ===
      '09316115d5cf24ed5a15a31a3ba326e5cf32edc24702987c02b6566f61913cf7',
    'bytes salt t=3 m=4MiB p=2': () =>
      gatehouse.argon2id('gatehouse', new Uint8Array([...Array(16).keys()]), 3, 4096, 2, 32) ===
      '5ad65a36253f6493548fd424b93bd0bf8b14acc259ce03448e455f92a188005d',
  });
