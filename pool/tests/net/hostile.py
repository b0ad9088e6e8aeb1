#!/usr/bin/env python3
"""hostile: a loopback resolver that forges, for the forgery tests
(forge_ports.sh, forge_case.sh).

Usage: hostile.py BASE MODE. It binds UDP on 127.0.0.1, writes its port
to BASE.port and one line "srcport name" per query (the name as it came,
case included) to BASE.log, and answers every query with one A record
192.0.2.1 and the question as it came, except:

- MODE first-port: for a name starting with "forge", first an answer with
  the right ID and question but the address 6.6.6.6, sent to the source
  port of the first query it saw; 50 ms later the genuine answer.
- MODE case: for a name starting with "forgery" (any case), first two
  answers with the right ID and the address 6.6.6.6, sent to the query's
  own port, whose name is the one it got in lower case (the spelling of
  a client that writes lower case) and with its case swapped; 50 ms
  later the genuine answer.
- MODE fold: every answer's question in lower case (a resolver that does
  not keep the case of the question, otherwise correct).

It exits after 30 s without a query.
"""
import socket
import struct
import sys
import time

FORGED = [6, 6, 6, 6]
GENUINE = [192, 0, 2, 1]


def name_end(q):
    pos = 12
    while q[pos]:
        pos += 1 + q[pos]
    return pos + 1


def answer(q, qname, addr4):
    """The answer to |q| with |qname| as its question's name."""
    end = name_end(q)
    flags = 0x8180 | (q[2] & 0x01) << 8
    return (q[:2] + struct.pack("!HHHHH", flags, 1, 1, 0, 0) + qname +
            q[end:end + 4] + b"\xc0\x0c" +
            struct.pack("!HHIH", 1, 1, 60, 4) + bytes(addr4))


def main():
    base, mode = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    with open(base + ".port", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    log = open(base + ".log", "w", buffering=1)
    s.settimeout(30)
    first_port = None
    try:
        while True:
            q, peer = s.recvfrom(4096)
            if len(q) < 17:
                continue
            qname = q[12:name_end(q)]
            labels, pos = [], 0
            while qname[pos]:
                labels.append(qname[pos + 1:pos + 1 + qname[pos]].decode())
                pos += 1 + qname[pos]
            name = ".".join(labels)
            log.write("%d %s\n" % (peer[1], name))
            if first_port is None:
                first_port = peer[1]
            if mode == "fold":
                qname = qname.lower()
            elif mode == "first-port" and name.startswith("forge"):
                s.sendto(answer(q, qname, FORGED), (peer[0], first_port))
                time.sleep(0.05)
            elif mode == "case" and name.lower().startswith("forgery"):
                s.sendto(answer(q, qname.lower(), FORGED), peer)
                s.sendto(answer(q, qname.swapcase(), FORGED), peer)
                time.sleep(0.05)
            s.sendto(answer(q, qname, GENUINE), peer)
    except socket.timeout:
        pass


if __name__ == "__main__":
    main()
