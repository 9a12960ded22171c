import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readCallText } from './readCallText.ts'

describe('readCallText', () => {
  it('counts members at every depth and keeps the id as written', () => {
    const text = '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{"to":"0x01","data":"0x"},"latest"]}'
    assert.deepEqual(readCallText(text), { members: 6, idText: '7' })
    // blanks, member order and strings holding JSON punctuation change nothing
    const spaced =
      ' { "params" : [ "a:b,c}" , {"k" : [1, {"n": null}]} ] , "method":"m", "id" : "x,y" ,"jsonrpc":"2.0" } '
    assert.deepEqual(readCallText(spaced), { members: 6, idText: '"x,y"' })
    assert.deepEqual(readCallText('{"jsonrpc":"2.0","method":"m","params":[],"id":null}'), {
      members: 4,
      idText: 'null',
    })
  })

  it('refuses an envelope a node could read differently: a member twice, another member, an escaped name', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","method":"eth_sendTransaction","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[],"params":[1]}',
      '{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","METHOD":"admin_peers","params":[]}',
      '{"jsonrpc":"2.0","id":1,"\\u006dethod":"m","params":[]}',
      // a notification (no id), and a call without params: written anew, as before
      '{"jsonrpc":"2.0","method":"m","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"m"}',
      '[{"jsonrpc":"2.0","id":1,"method":"m","params":[]}]',
    ]) {
      assert.equal(readCallText(text), undefined, text)
    }
  })

  it('refuses numbers that serialising the parsed value writes differently', () => {
    for (const number of ['1.0', '1e3', '1E3', '2.5', '-0', '1e+2', '1234567890123456']) {
      assert.equal(
        readCallText(`{"jsonrpc":"2.0","id":${number},"method":"m","params":[]}`),
        undefined,
        number,
      )
      assert.equal(
        readCallText(`{"jsonrpc":"2.0","id":1,"method":"m","params":[${number}]}`),
        undefined,
        number,
      )
    }
    // plain integers, negative ones, and digits or dots inside strings are fine
    assert.deepEqual(
      readCallText('{"jsonrpc":"2.0","id":-12,"method":"m","params":[123456789012345,"1.5e9"]}'),
      {
        members: 4,
        idText: '-12',
      },
    )
    // true and false hold an `e` that is no exponent
    assert.ok(readCallText('{"jsonrpc":"2.0","id":1,"method":"m","params":[true,false]}'))
  })

  it('refuses text that closes more than it opened (not one call)', () => {
    const call = '{"jsonrpc":"2.0","id":1,"method":"m","params":[]}'
    assert.deepEqual(readCallText(call), { members: 4, idText: '1' })
    assert.equal(readCallText(`${call}]]]]${'['.repeat(6)}`), undefined)
  })
})
