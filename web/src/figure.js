// figure.js -- a robot as the clip view draws it: the urdf-loader model
// (its visuals where the URDF has primitives; meshes are not fetched, the
// bundled G1/H1 reference meshes that are not shipped), a stick figure from
// each joint's parent link to its child link, a dot per link and the link
// frames. pose(row) sets the root and every joint from one trajectory row;
// it allocates nothing.
import * as THREE from 'three';
import URDFLoader from 'urdf-loader';

const tmp = new THREE.Vector3();

export class RobotFigure {
    // urdfText: the URDF; color: the stick figure's colour.
    constructor(urdfText, color) {
        const loader = new URDFLoader();
        loader.parseCollision = false;
        loader.loadMeshCb = (path, manager, material, done) => done(null);
        this.robot = loader.parse(urdfText);
        // Where the figure stands apart from its trajectory (side by side).
        this.offset = new THREE.Group();
        this.offset.add(this.robot);
        this.joints = this.robot.joints;  // name -> URDFJoint
        this.segments = [];               // [parent link, child link]
        this.links = [];
        this.robot.traverse((o) => {
            if (o.isURDFLink) this.links.push(o);
            if (o.isURDFJoint) {
                const child = o.children.find((c) => c.isURDFLink);
                let parent = o.parent;
                while (parent && !parent.isURDFLink) parent = parent.parent;
                if (child && parent) this.segments.push([parent, child]);
                o.ignoreLimits = true;     // show the values as they are
                o.setJointValue(0);        // records the joint's rest pose
            }
        });
        this.frames = [];
        for (const l of this.links) {
            const a = new THREE.AxesHelper(0.05);
            a.material.depthTest = false;
            a.renderOrder = 2;
            l.add(a);
            this.frames.push(a);
        }
        this.linePos = new Float32Array(this.segments.length * 6);
        const lg = new THREE.BufferGeometry();
        lg.setAttribute('position', new THREE.BufferAttribute(this.linePos, 3));
        this.stick = new THREE.LineSegments(lg, new THREE.LineBasicMaterial({ color, depthTest: false }));
        this.stick.renderOrder = 1;
        this.stick.frustumCulled = false;
        this.dotPos = new Float32Array(this.links.length * 3);
        const pg = new THREE.BufferGeometry();
        pg.setAttribute('position', new THREE.BufferAttribute(this.dotPos, 3));
        this.dots = new THREE.Points(pg, new THREE.PointsMaterial({ color, size: 6, sizeAttenuation: false, depthTest: false }));
        this.dots.renderOrder = 1;
        this.dots.frustumCulled = false;
        this.refs = [];
    }

    // The trajectory's column names: root_x..root_qw, then joint names.
    setColumns(columns) {
        this.refs = [];
        columns.forEach((name, col) => {
            const j = this.joints[name];
            if (col >= 7 && j && j.jointType !== 'fixed') this.refs.push({ joint: j, col });
        });
        return this.refs.length;
    }

    // Movable joints in URDF order (the columns of a CSV without a header).
    movableJointNames() {
        return Object.values(this.joints).filter((j) => j.jointType !== 'fixed').map((j) => j.name);
    }

    pose(row) {
        this.robot.position.set(row[0], row[1], row[2]);
        this.robot.quaternion.set(row[3], row[4], row[5], row[6]).normalize();
        for (let i = 0; i < this.refs.length; i++) {
            const { joint, col } = this.refs[i];
            const v = row[col];
            if (joint.jointValue[0] === v) continue;
            if ((joint.jointType === 'revolute' || joint.jointType === 'continuous') && !joint.mimicJoints.length) {
                // urdf-loader's setJointValue() without its argument arrays.
                joint.quaternion.setFromAxisAngle(joint.axis, v).premultiply(joint.origQuaternion);
                joint.jointValue[0] = v;
                joint.matrixWorldNeedsUpdate = true;
            } else {
                joint.setJointValue(v);
            }
        }
    }

    // After the scene's matrices are updated: the stick figure and dots.
    update() {
        const p = this.linePos;
        for (let i = 0; i < this.segments.length; i++) {
            const [a, b] = this.segments[i];
            tmp.setFromMatrixPosition(a.matrixWorld);
            p[6 * i] = tmp.x; p[6 * i + 1] = tmp.y; p[6 * i + 2] = tmp.z;
            tmp.setFromMatrixPosition(b.matrixWorld);
            p[6 * i + 3] = tmp.x; p[6 * i + 4] = tmp.y; p[6 * i + 5] = tmp.z;
        }
        this.stick.geometry.attributes.position.needsUpdate = true;
        const d = this.dotPos;
        for (let i = 0; i < this.links.length; i++) {
            tmp.setFromMatrixPosition(this.links[i].matrixWorld);
            d[3 * i] = tmp.x; d[3 * i + 1] = tmp.y; d[3 * i + 2] = tmp.z;
        }
        this.dots.geometry.attributes.position.needsUpdate = true;
    }

    // World position (three's frame) of link `name` into `out`; false if none.
    linkWorld(name, out) {
        const l = this.robot.links[name];
        if (!l) return false;
        out.setFromMatrixPosition(l.matrixWorld);
        return true;
    }

    showFrames(on) {
        for (const a of this.frames) a.visible = on;
    }

    // The objects to add to the scene (the model sits in a z-up group).
    addTo(zUp, scene) {
        zUp.add(this.offset);
        scene.add(this.stick, this.dots);
    }

    dispose() {
        this.offset.removeFromParent();
        this.stick.removeFromParent();
        this.dots.removeFromParent();
        this.stick.geometry.dispose();
        this.dots.geometry.dispose();
        this.robot.traverse((o) => {
            if (o.geometry) o.geometry.dispose();
        });
    }
}
